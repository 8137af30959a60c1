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

export { InputError, ManifestError, NotFoundError, RunError } from "./errors.ts";
export {
  createLogger,
  LOG_LEVELS,
  type LogFields,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  silentLogger,
} from "./log.ts";
export {
  cacheDir,
  configDir,
  type ConfigDirOptions,
  hooksDir,
  pluginsDir,
  runtimeDir,
} from "./dirs.ts";
export { parseDuration } from "./duration.ts";
export {
  EMPTY_TASK,
  parseTask,
  type Task,
  taskEnv,
  type TaskEnvOptions,
  validateTask,
} from "./task.ts";
export type {
  HookSettings,
  LoadWarning,
  Plugin,
  PluginAction,
  PluginIndex,
  PluginService,
  RestartPolicy,
} from "./plugins/types.ts";
export { type RunMode, type RunOptions, runScript } from "./process/run_script.ts";
export { failureReason, type RunRecord, type RunResult, succeeded } from "./process/record.ts";
export {
  DEFAULT_TIMEOUTS,
  Runner,
  type RunnerOptions,
  type StatusChangeResult,
  statusEvent,
  type Timeouts,
} from "./hooks/runner.ts";
export type { AskHandler, AskRequest, ConsultOptions, ConsultRunner } from "./consult/consult.ts";
export {
  isEmptyDecision,
  NO_ROUTE,
  parseRouteOutput,
  route,
  ROUTE_EVENT,
  type RouteDecision,
  type RouteOptions,
  type RouteResult,
} from "./consult/route.ts";
export {
  type HostCandidate,
  HOSTS_EVENT,
  type HostsList,
  listHosts,
  LOCAL_PLACEMENT,
  type Placement,
  PLACEMENT_EVENT,
  resolvePlacement,
} from "./consult/placement.ts";
export {
  type FailurePolicy,
  POST_TOOL_EVENT,
  PRE_TOOL_EVENT,
  type PreToolOptions,
  ToolHooks,
  type ToolHooksOptions,
  type ToolRunner,
  type ToolVerdict,
} from "./consult/tool_hooks.ts";
export { BLOCK_EXIT_CODE, judgePreRun, type PreOutcome } from "./consult/tool_hooks.ts";
export { type LoadOptions, loadPlugins } from "./plugins/load.ts";
export { validatePlugins, type ValidationResult } from "./plugins/validate.ts";
export { type PluginJson, type PluginListJson, pluginListJson } from "./plugins/listing.ts";
export { manifestJsonSchema } from "./plugins/json_schema.ts";
export { type InstallOptions, installPlugin, type InstallResult } from "./plugins/install.ts";
export { removePlugin, type RemoveResult } from "./plugins/installed.ts";
export { probeHost, type ProbeOptions } from "./hosts/probe.ts";
export { defaultProbe, type HostEntry, parseHostsFile, readHostsFile } from "./hosts/hosts_file.ts";
export { sshCommand } from "./hosts/ssh.ts";
export { pickHost, type PickOptions, type PickResult } from "./hosts/pick.ts";
export type { HostOutcome } from "./hosts/pick.ts";
export { type Candidate, type Choice, choose, STRATEGIES, type Strategy } from "./hosts/pick.ts";
export {
  ServiceSet,
  type ServiceSetOptions,
  startServices,
  type StopOptions,
} from "./services/service_set.ts";
export {
  DEFAULT_STOP_TIMEOUT_MS,
  Supervisor,
  type SupervisorOptions,
} from "./services/supervisor.ts";
export {
  type BackoffOptions,
  DEFAULT_BACKOFF,
  nextStep,
  NO_STREAK,
  type RunEnd,
  type Step,
  type Streak,
} from "./services/backoff.ts";
export {
  DEFAULT_MAX_LINE_BYTES,
  type LineSink,
  type LineSource,
  prefixedStderr,
  type Relay,
  relayLines,
  stderrSink,
} from "./services/line_relay.ts";
export { parseEnvEntry, serviceEnv } from "./services/supervisor.ts";
export { listServices } from "./services/service_set.ts";
export type {
  LastExit,
  ServiceEntry,
  ServicesList,
  ServicesStatus,
  ServiceState,
  ServiceStatus,
} from "./wire/services.ts";
export { type Daemon, type DaemonOptions, startDaemon } from "./serve/server.ts";
export type { ServiceSupervisor } from "./serve/endpoints.ts";
export type { WatchDirOptions } from "./serve/index_holder.ts";
export { formatListen, type ListenAddress, parseListen } from "./serve/listen.ts";

// Every format tyhooks reads or writes, as documented interfaces, and the schemas that validate
// them: zod's, each checked at compile time against its interface and exported as a Schema of it
// (schemas.ts), so no zod type is part of the API. Importing the library loads zod; the CLI never
// imports this module, so its startup does not pay for that.
export type {
  Manifest,
  ManifestAction,
  ManifestHookSettings,
  ManifestService,
} from "./plugins/manifest_schema.ts";
export type { PlacementAnswer, PlacementInfo, PlacementRequest } from "./wire/placement.ts";
export type { PostToolCall, PreToolAnswer, ToolCall, ToolHookRequest } from "./wire/tool.ts";
export type { HostFacts } from "./hosts/probe_schema.ts";
export type { EventBody, PlacementBody, StatusChangeBody, TaskBody } from "./wire/bodies.ts";
export type { SafeParse, Schema, SchemaIssue } from "./wire/schema.ts";
export {
  EventBodySchema,
  HostFactsSchema,
  LastExitSchema,
  ManifestSchema,
  PlacementAnswerSchema,
  PlacementBodySchema,
  PlacementRequestSchema,
  PostToolCallSchema,
  PreToolAnswerSchema,
  ServiceEntrySchema,
  ServicesListSchema,
  ServicesStatusSchema,
  ServiceStateSchema,
  ServiceStatusSchema,
  StatusChangeBodySchema,
  TaskBodySchema,
  TaskSchema,
  ToolCallSchema,
  ToolHookRequestSchema,
} from "./schemas.ts";
export { VERSION } from "./version.ts";
