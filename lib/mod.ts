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
export { parseEnvEntry, serviceEnv } from "./services/service_env.ts";
export { listServices } from "./services/service_list.ts";
export type { LastExit, ServiceEntry, ServiceState, ServiceStatus } from "./services/types.ts";
export { VERSION } from "./version.ts";
