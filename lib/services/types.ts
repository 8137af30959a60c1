/**
 * The data shapes of services, as plain types (the zod schemas in `schema.ts` are checked
 * against them, and are loaded only on demand).
 *
 * @module
 */

import type { RestartPolicy } from "../plugins/types.ts";

/** One entry of `services list --json`: what would run, from the manifest. */
export interface ServiceEntry {
  plugin: string;
  name: string;
  /** Run with `sh -c`. */
  command: string;
  /** Absolute working directory. */
  cwd: string;
  restart: RestartPolicy;
}

/** How a service's last run ended. */
export interface LastExit {
  /** Exit code; null when it died by a signal or never started. */
  code: number | null;
  /** The signal that ended it (`SIGTERM`, `SIGKILL`), or null. */
  signal: string | null;
  /** Why it could not start, else null. */
  error: string | null;
  /** How long it ran. */
  uptime_ms: number;
}

/**
 * A service's state: `starting` (spawned, not yet up for a second), `running`, `backoff`
 * (waiting to restart), `given_up` (too many quick failures in a row), `stopped` (stopped by the
 * supervisor, or ended and not restarted by its policy).
 */
export type ServiceState = "starting" | "running" | "backoff" | "given_up" | "stopped";

/** One supervised service, as `GET /v1/services` lists it. */
export interface ServiceStatus {
  plugin: string;
  name: string;
  state: ServiceState;
  /** Its pid, which is also its process-group id; null while no process runs. */
  pid: number | null;
  /** Restarts since the supervisor started. */
  restarts: number;
  /** Null until the first run ends. */
  last_exit: LastExit | null;
}
