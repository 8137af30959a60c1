/**
 * The data shapes of services, as plain types (the zod schemas in `schema.ts` are checked
 * against them, and are loaded only on demand).
 *
 * @module
 */

import type { RestartPolicy } from "../plugins/types.ts";

/**
 * One entry of `services list --json`: what would run, from the manifest.
 *
 * @example
 * ```ts
 * import { listServices } from "./service_list.ts";
 * import type { ServiceEntry } from "./types.ts";
 * const entries: ServiceEntry[] = listServices({ dir: "/none", plugins: [], warnings: [] });
 * console.assert(entries.length === 0);
 * ```
 */
export interface ServiceEntry {
  /** The plugin the service belongs to. */
  plugin: string;
  /** The service's name, unique within its plugin. */
  name: string;
  /** Run with `sh -c`. */
  command: string;
  /** Absolute working directory. */
  cwd: string;
  /** When it is restarted. */
  restart: RestartPolicy;
}

/**
 * How a service's last run ended.
 *
 * @example
 * ```ts
 * import type { LastExit } from "./types.ts";
 * const killed: LastExit = { code: null, signal: "SIGKILL", error: null, uptime_ms: 1200 };
 * console.assert(killed.code === null && killed.signal === "SIGKILL");
 * ```
 */
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
 *
 * @example
 * ```ts
 * import type { ServiceState } from "./types.ts";
 * const waiting: ServiceState[] = ["starting", "backoff"];
 * console.assert(!waiting.includes("running"));
 * ```
 */
export type ServiceState = "starting" | "running" | "backoff" | "given_up" | "stopped";

/**
 * One supervised service, as `GET /v1/services` lists it.
 *
 * @example
 * ```ts
 * import { startServices } from "./service_set.ts";
 * import type { ServiceStatus } from "./types.ts";
 * const set = startServices({ dir: "/none", plugins: [], warnings: [] });
 * const statuses: ServiceStatus[] = set.status();
 * console.assert(statuses.length === 0);
 * await set.stop();
 * ```
 */
export interface ServiceStatus {
  /** The plugin the service belongs to. */
  plugin: string;
  /** The service's name. */
  name: string;
  /** Where it is in its life. */
  state: ServiceState;
  /** Its pid, which is also its process-group id; null while no process runs. */
  pid: number | null;
  /** Restarts since the supervisor started. */
  restarts: number;
  /** Null until the first run ends. */
  last_exit: LastExit | null;
}

/**
 * The `services list --json` document.
 *
 * @example
 * ```ts
 * import { listServices } from "./service_list.ts";
 * import type { ServicesList } from "./types.ts";
 * const list: ServicesList = { services: listServices({ dir: "/none", plugins: [], warnings: [] }) };
 * console.assert(JSON.stringify(list) === '{"services":[]}');
 * ```
 */
export interface ServicesList {
  /** What would run, plugins in name order, each plugin's services in manifest order. */
  services: ServiceEntry[];
}

/**
 * The `GET /v1/services` document of `tyhooks serve`.
 *
 * @example
 * ```ts
 * import type { ServicesStatus } from "./types.ts";
 * const status: ServicesStatus = {
 *   services: [{ plugin: "p", name: "s", state: "running", pid: 42, restarts: 0, last_exit: null }],
 * };
 * console.assert(status.services[0].state === "running");
 * ```
 */
export interface ServicesStatus {
  /** Every supervised service; empty when the daemon runs without `--services`. */
  services: ServiceStatus[];
}
