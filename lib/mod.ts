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

export { HostsFileError, InputError, NotFoundError, RunError } from "./errors.ts";
export {
  createLogger,
  type LogFields,
  type Logger,
  type LoggerOptions,
  type LogLevel,
} from "./log.ts";
export { hooksDir, pluginsDir } from "./paths.ts";
export { VERSION } from "./version.ts";

// Plugins: loading, checking, installing.
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
export {
  type InstallOptions,
  installPlugin,
  type InstallResult,
} from "./plugins/install/install.ts";
export { removePlugin, type RemoveResult } from "./plugins/install/remove.ts";

// Running hooks: the one runner, events, actions and the consulted calls.
export {
  type RunMode,
  type RunOptions,
  type RunRecord,
  type RunResult,
  runScript,
} from "./process/run_script.ts";
export {
  type ActionOptions,
  Runner,
  type RunnerOptions,
  type StatusChangeResult,
} from "./hooks/runner.ts";
export { type Timeouts } from "./events.ts";
export type { Limit } from "./async.ts";
export type { AskHandler, AskRequest, ConsultOptions } from "./consult/consult.ts";
export {
  parseRouteOutput,
  type RouteDecision,
  type RouteOptions,
  type RouteResult,
} from "./consult/route.ts";

// Services and the daemon.
export {
  ServiceSet,
  type ServiceSetOptions,
  startServices,
  type StopOptions,
} from "./services/service_set.ts";
export { type Daemon, type DaemonOptions, startDaemon } from "./serve/server.ts";
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

// Every format tyhooks reads or writes, as a documented interface and the schema tyhooks reads it
// with, typed as a `Schema` of the interface (for the manifest, the zod schema that also
// generates its JSON Schema, with `manifestJsonSchema`).
export type { SafeParse, Schema, SchemaIssue } from "./wire/json.ts";
export { SchemaError } from "./wire/json.ts";
export {
  EMPTY_TASK,
  type EventBody,
  parseTask,
  type PlacementBody,
  type StatusChangeBody,
  type Task,
  type TaskBody,
  TaskSchema,
} from "./wire/task.ts";
export {
  LibraryManifestSchema as ManifestSchema,
  type Manifest,
  type ManifestAction,
  type ManifestHookSettings,
  manifestJsonSchema,
  type ManifestService,
} from "./plugins/manifest_schema.ts";
export {
  type HostCandidate,
  type HostsList,
  type Placement,
  type PlacementAnswer,
  PlacementAnswerSchema,
  type PlacementInfo,
  type PlacementRequest,
  PlacementRequestSchema,
} from "./consult/placement.ts";
export { type PreToolAnswer, PreToolAnswerSchema } from "./consult/guards.ts";
export {
  type AgentEventCall,
  type AgentEventRequest,
  type AgentInfo,
  type AgentVerdict,
  type FailurePolicy,
  type PostToolCall,
  type PreToolOptions,
  type ToolCall,
  type ToolHookRequest,
  ToolHookRequestSchema,
  ToolHooks,
  type ToolHooksOptions,
  type ToolVerdict,
} from "./consult/tool_hooks.ts";
export { type HostFacts, HostFactsSchema } from "./wire/host_facts.ts";
export {
  type LastExit,
  type ServiceEntry,
  type ServicesList,
  ServicesListSchema,
  type ServicesStatus,
  ServicesStatusSchema,
  type ServiceState,
  type ServiceStatus,
} from "./wire/services.ts";
