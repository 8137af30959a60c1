/**
 * tyhooks as a library: everything the CLI does is a call here first.
 *
 * @example Fire an event at the plugins of a directory
 * ```ts
 * import { loadPlugins, Runner } from "./mod.ts";
 * const runner = new Runner(await loadPlugins("/nonexistent"));
 * const runs = await runner.fire("task.done");
 * console.assert(runs.length === 0);
 * ```
 *
 * @module
 */

import type { Schema } from "./wire/schema.ts";
import * as task from "./wire/task.ts";
import * as manifest from "./plugins/manifest_schema.ts";
import * as placement from "./wire/placement.ts";
import * as tool from "./wire/tool.ts";
import * as facts from "./wire/host_facts.ts";
import * as services from "./wire/services.ts";
import * as bodies from "./wire/bodies.ts";

export { InputError, ManifestError, NotFoundError, RunError } from "./errors.ts";
export {
  createLogger,
  type LogFields,
  type Logger,
  type LoggerOptions,
  type LogLevel,
} from "./log.ts";
export { hooksDir, pluginsDir } from "./dirs.ts";
export { EMPTY_TASK, parseTask, type Task, validateTask } from "./task.ts";

// Plugins: loading, checking, listing, installing.
export type {
  HookSettings,
  LoadWarning,
  Plugin,
  PluginAction,
  PluginIndex,
  PluginService,
  RestartPolicy,
} from "./plugins/types.ts";
export { type LoadOptions, loadPlugins } from "./plugins/load.ts";
export { validatePlugins, type ValidationResult } from "./plugins/validate.ts";
export { type PluginJson, type PluginListJson, pluginListJson } from "./plugins/listing.ts";
export { manifestJsonSchema } from "./plugins/manifest_schema.ts";
export {
  type InstallOptions,
  installPlugin,
  type InstallResult,
} from "./plugins/install/install.ts";
export { removePlugin, type RemoveResult } from "./plugins/install/remove.ts";

// Running hooks: the one runner, events, actions and the consulted calls.
export { type RunMode, type RunOptions, runScript } from "./process/run_script.ts";
export type { RunRecord, RunResult } from "./process/run_script.ts";
export {
  Runner,
  type RunnerOptions,
  type StatusChangeResult,
  statusEvent,
  type Timeouts,
} from "./hooks/runner.ts";
export type { Limit } from "./process/limit.ts";
export type { AskHandler, AskRequest, ConsultOptions } from "./consult/consult.ts";
export {
  parseRouteOutput,
  type RouteDecision,
  type RouteOptions,
  type RouteResult,
} from "./consult/route.ts";
export type { HostCandidate, HostsList, Placement } from "./consult/placement.ts";
export {
  type FailurePolicy,
  type PreToolOptions,
  ToolHooks,
  type ToolHooksOptions,
  type ToolVerdict,
} from "./consult/tool_hooks.ts";

// Services and the daemon.
export {
  ServiceSet,
  type ServiceSetOptions,
  startServices,
  type StopOptions,
} from "./services/service_set.ts";
export { type Daemon, type DaemonOptions, startDaemon } from "./serve/server.ts";
export type { ServiceSupervisor } from "./serve/endpoints.ts";
export type { WatchDirOptions } from "./serve/index_holder.ts";
export type { ListenAddress } from "./serve/listen.ts";

// Agent hosts.
export { probeHost, type ProbeOptions } from "./hosts/probe.ts";
export { type HostEntry, readHostsFile } from "./hosts/hosts_file.ts";
export {
  type HostOutcome,
  pickHost,
  type PickOptions,
  type PickResult,
  type Strategy,
} from "./hosts/pick.ts";

// Every format tyhooks reads or writes, as a documented interface and the zod schema tyhooks
// validates it with, typed as a `Schema` of the interface so that no zod type is part of the
// API. Importing the library loads zod; the CLI never imports this module.
export type { SafeParse, Schema, SchemaIssue } from "./wire/schema.ts";
export type {
  Manifest,
  ManifestAction,
  ManifestHookSettings,
  ManifestService,
} from "./plugins/manifest_schema.ts";
export type { PlacementAnswer, PlacementInfo, PlacementRequest } from "./wire/placement.ts";
export type { PostToolCall, PreToolAnswer, ToolCall, ToolHookRequest } from "./wire/tool.ts";
export type { HostFacts } from "./wire/host_facts.ts";
export type {
  LastExit,
  ServiceEntry,
  ServicesList,
  ServicesStatus,
  ServiceState,
  ServiceStatus,
} from "./wire/services.ts";
export type { EventBody, PlacementBody, StatusChangeBody, TaskBody } from "./wire/bodies.ts";

/** A task (`--task`, `--task-json`, the daemon's bodies): unknown fields dropped, missing ones empty. */
export const TaskSchema: Schema<task.Task> = task.TaskSchema;
/** A `plugin.yaml`, strict: an unknown key is an issue (`plugins validate`). */
export const ManifestSchema: Schema<manifest.Manifest> = manifest.ManifestSchema;
/** The request a `task.placement` handler reads on stdin. */
export const PlacementRequestSchema: Schema<placement.PlacementRequest> =
  placement.PlacementRequestSchema;
/** A `task.placement` handler's answer: strings, trimmed, missing or null = empty; extra keys dropped. */
export const PlacementAnswerSchema: Schema<placement.PlacementAnswer> =
  placement.PlacementAnswerSchema;
/** A tool call as a host describes it (`POST /v1/tool/pre`); parsing fills in the defaults. */
export const ToolCallSchema: Schema<Required<tool.ToolCall>> = tool.ToolCallSchema;
/** A finished tool call (`POST /v1/tool/post`); parsing fills in the defaults. */
export const PostToolCallSchema: Schema<Required<tool.PostToolCall>> = tool.PostToolCallSchema;
/** The request a `pre_tool_call` or `post_tool_call` hook reads on stdin. */
export const ToolHookRequestSchema: Schema<tool.ToolHookRequest> = tool.ToolHookRequestSchema;
/** A `pre_tool_call` hook's answer; the action is trimmed and lower-cased first. */
export const PreToolAnswerSchema: Schema<tool.PreToolAnswer> = tool.PreToolAnswerSchema;
/** What `tyhooks probe` prints and `pick-host` reads; unknown keys dropped (newer hosts add facts). */
export const HostFactsSchema: Schema<facts.HostFacts> = facts.HostFactsSchema;
/** The `services list --json` document. */
export const ServicesListSchema: Schema<services.ServicesList> = services.ServicesListSchema;
/** The `GET /v1/services` document. */
export const ServicesStatusSchema: Schema<services.ServicesStatus> = services.ServicesStatusSchema;
/** The body of `POST /v1/route` and `POST /v1/actions/{plugin}/{action}`. */
export const TaskBodySchema: Schema<bodies.TaskBody> = bodies.TaskBodySchema;
/** The body of `POST /v1/placement`. */
export const PlacementBodySchema: Schema<bodies.PlacementBody> = bodies.PlacementBodySchema;
/** The body of `POST /v1/events/{event}`. */
export const EventBodySchema: Schema<bodies.EventBody> = bodies.EventBodySchema;
/** The body of `POST /v1/status-change`: `status` is required. */
export const StatusChangeBodySchema: Schema<bodies.StatusChangeBody> =
  bodies.StatusChangeBodySchema;

/** The tyhooks version; a test keeps it equal to `deno.json`'s. */
export { VERSION } from "./version.ts";
