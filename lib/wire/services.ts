/**
 * Wire formats of services: `services list --json` and the daemon's `GET /v1/services`.
 *
 * @module
 */

import {
  array,
  type Infer,
  nullable,
  number,
  object,
  oneOf,
  type Same,
  type Schema,
  string,
} from "./json.ts";

/** Restart policies of a service. */
export type RestartPolicy = "always" | "on-failure" | "never";

/** One entry of `services list --json`: what would run, from the manifest. */
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

/** The `services list --json` document. */
export interface ServicesList {
  /** What would run, plugins in name order, each plugin's services in manifest order. */
  services: ServiceEntry[];
}

/** The `GET /v1/services` document of `tyhooks serve`. */
export interface ServicesStatus {
  /** Every supervised service; empty when the daemon runs without `--services`. */
  services: ServiceStatus[];
}

// Strict: these documents are tyhooks' own output, so an unknown key means the two ends drifted.
const strict = { strict: true };
const count = number({ integer: true, min: 0 });

const servicesList = object({
  services: array(object({
    plugin: string(),
    name: string(),
    command: string(),
    cwd: string(),
    restart: oneOf(["always", "on-failure", "never"]),
  }, strict)),
}, strict);
true satisfies Same<Infer<typeof servicesList>, ServicesList>;

/** The `services list --json` document. */
export const ServicesListSchema: Schema<ServicesList> = servicesList;

const lastExit = object({
  code: nullable(number({ integer: true })),
  signal: nullable(string()),
  error: nullable(string()),
  uptime_ms: count,
}, strict);
const servicesStatus = object({
  services: array(object({
    plugin: string(),
    name: string(),
    state: oneOf(["starting", "running", "backoff", "given_up", "stopped"]),
    pid: nullable(number({ integer: true, min: 1 })),
    restarts: count,
    last_exit: nullable(lastExit),
  }, strict)),
}, strict);
true satisfies Same<Infer<typeof servicesStatus>, ServicesStatus>;

/** The `GET /v1/services` document. */
export const ServicesStatusSchema: Schema<ServicesStatus> = servicesStatus;
