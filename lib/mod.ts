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

export { ManifestError, RunError, UsageError } from "./errors.ts";
export {
  createLogger,
  type Logger,
  type LoggerOptions,
  type LogLevel,
  silentLogger,
} from "./log.ts";
export { cacheDir, configDir, hooksDir, pluginsDir, runtimeDir } from "./dirs.ts";
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
  LoadWarning,
  Plugin,
  PluginAction,
  PluginIndex,
  PluginService,
  RestartPolicy,
} from "./plugins/types.ts";
export { type RunOptions, runScript } from "./process/run_script.ts";
export { failureReason, type RunRecord, type RunResult, succeeded } from "./process/record.ts";
export { Runner, type RunnerOptions, type StatusChangeResult } from "./hooks/runner.ts";
export { statusEvent } from "./hooks/status_event.ts";
export { DEFAULT_TIMEOUTS, type Timeouts } from "./hooks/timeouts.ts";
export {
  CONSULT_GRACE_MS,
  type ConsultOptions,
  type Deadline,
  type HandlerBudget,
  MIN_HANDLER_MS,
  startDeadline,
} from "./hooks/consult_deadline.ts";
export { isEmptyDecision, parseRouteOutput, type RouteDecision } from "./resolve/route_output.ts";
export { NO_ROUTE, route, ROUTE_EVENT, type RouteResult } from "./resolve/route.ts";
export {
  LOCAL_PLACEMENT,
  type Placement,
  PLACEMENT_EVENT,
  type PlacementInfo,
  resolvePlacement,
} from "./resolve/placement.ts";
export {
  type FailurePolicy,
  POST_TOOL_EVENT,
  PRE_TOOL_EVENT,
  type PreToolOptions,
  ToolHooks,
  type ToolHooksOptions,
  type ToolVerdict,
} from "./toolcalls/tool_hooks.ts";
export { BLOCK_EXIT_CODE, judgePreRun, type PreOutcome } from "./toolcalls/pre_verdict.ts";
// Types only: the schema modules load zod, which is only ever loaded lazily. The schemas
// themselves: lib/resolve/placement_schema.ts, lib/toolcalls/tool_schema.ts.
export type { PlacementAnswer, PlacementRequest } from "./resolve/placement_schema.ts";
export type {
  PostToolCall,
  PreToolAnswer,
  ToolCall,
  ToolHookRequest,
} from "./toolcalls/tool_schema.ts";
export { VERSION } from "./version.ts";
