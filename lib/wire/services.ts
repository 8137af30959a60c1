/**
 * Wire formats of services: the `services list --json` document and the status the daemon
 * serves at `GET /v1/services`, each as an interface, its zod schema, and one compile-time check
 * that they agree. Import the interfaces with `import type` (erased): only the schemas load zod.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "./schema.ts";

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

/** Validates a {@linkcode ServiceEntry}. */
export const ServiceEntrySchema = z.strictObject({
  plugin: z.string(),
  name: z.string(),
  command: z.string().meta({ description: "Run with sh -c" }),
  cwd: z.string().meta({ description: "Absolute working directory" }),
  restart: z.enum(["always", "on-failure", "never"]),
});

/** Validates a {@linkcode ServicesList}. */
export const ServicesListSchema = z.strictObject({
  services: z.array(ServiceEntrySchema),
});

/** Validates a {@linkcode LastExit}. */
export const LastExitSchema = z.strictObject({
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  error: z.string().nullable(),
  uptime_ms: z.number().int().nonnegative(),
});

/** Validates a {@linkcode ServiceState}. */
export const ServiceStateSchema = z.enum(["starting", "running", "backoff", "given_up", "stopped"]);

/** Validates a {@linkcode ServiceStatus}. */
export const ServiceStatusSchema = z.strictObject({
  plugin: z.string(),
  name: z.string(),
  state: ServiceStateSchema,
  pid: z.number().int().positive().nullable(),
  restarts: z.number().int().nonnegative(),
  last_exit: LastExitSchema.nullable(),
});

/** Validates a {@linkcode ServicesStatus}. */
export const ServicesStatusSchema = z.strictObject({
  services: z.array(ServiceStatusSchema),
});

// The schemas validate, the interfaces document: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof ServiceEntrySchema>, ServiceEntry>;
true satisfies Same<z.output<typeof ServicesListSchema>, ServicesList>;
true satisfies Same<z.output<typeof LastExitSchema>, LastExit>;
true satisfies Same<z.output<typeof ServiceStateSchema>, ServiceState>;
true satisfies Same<z.output<typeof ServiceStatusSchema>, ServiceStatus>;
true satisfies Same<z.output<typeof ServicesStatusSchema>, ServicesStatus>;
