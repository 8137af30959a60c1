/**
 * Wire formats of services: the `services list --json` document and the status the daemon
 * serves at `GET /v1/services`. Each schema is checked at compile time to describe exactly its
 * interface in `types.ts`. This module imports zod statically: load it with `await import(...)`.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "../_type_check.ts";
import type {
  LastExit,
  ServiceEntry,
  ServicesList,
  ServicesStatus,
  ServiceState,
  ServiceStatus,
} from "./types.ts";

/**
 * One entry of `services list --json`: what would run, from the manifest.
 *
 * @example
 * ```ts
 * import { ServiceEntrySchema } from "./schema.ts";
 * const entry = { plugin: "p", name: "s", command: "./srv", cwd: "/p", restart: "always" };
 * console.assert(ServiceEntrySchema.safeParse(entry).success);
 * ```
 */
export const ServiceEntrySchema = z.strictObject({
  plugin: z.string(),
  name: z.string(),
  command: z.string().meta({ description: "Run with sh -c" }),
  cwd: z.string().meta({ description: "Absolute working directory" }),
  restart: z.enum(["always", "on-failure", "never"]),
}) satisfies z.ZodType<ServiceEntry>;

/**
 * The `services list --json` document.
 *
 * @example
 * ```ts
 * import { ServicesListSchema } from "./schema.ts";
 * console.assert(ServicesListSchema.safeParse({ services: [] }).success);
 * ```
 */
export const ServicesListSchema = z.strictObject({
  services: z.array(ServiceEntrySchema),
}) satisfies z.ZodType<ServicesList>;

/**
 * How a service's last run ended. `code` is null when it died by a signal or never started;
 * `signal` is the signal's name or null; `error` says why it could not start, else null;
 * `uptime_ms` is how long it ran.
 *
 * @example
 * ```ts
 * import { LastExitSchema } from "./schema.ts";
 * const exit = { code: 1, signal: null, error: null, uptime_ms: 12 };
 * console.assert(LastExitSchema.safeParse(exit).success);
 * ```
 */
export const LastExitSchema = z.strictObject({
  code: z.number().int().nullable(),
  signal: z.string().nullable(),
  error: z.string().nullable(),
  uptime_ms: z.number().int().nonnegative(),
}) satisfies z.ZodType<LastExit>;

/**
 * A service's state: `starting` (spawned, not yet up for a second), `running`, `backoff`
 * (waiting to restart), `given_up` (too many quick failures in a row), `stopped` (stopped by the
 * supervisor, or ended and not restarted by its policy).
 *
 * @example
 * ```ts
 * import { ServiceStateSchema } from "./schema.ts";
 * console.assert(ServiceStateSchema.safeParse("backoff").success);
 * ```
 */
export const ServiceStateSchema = z.enum([
  "starting",
  "running",
  "backoff",
  "given_up",
  "stopped",
]) satisfies z.ZodType<ServiceState>;

/**
 * One supervised service, as `GET /v1/services` lists it. `pid` (also its process-group id) is
 * null while no process runs; `restarts` counts restarts since the supervisor started;
 * `last_exit` is null until the first run ends.
 *
 * @example
 * ```ts
 * import { ServiceStatusSchema } from "./schema.ts";
 * const status = { plugin: "p", name: "s", state: "running", pid: 42, restarts: 0, last_exit: null };
 * console.assert(ServiceStatusSchema.safeParse(status).success);
 * ```
 */
export const ServiceStatusSchema = z.strictObject({
  plugin: z.string(),
  name: z.string(),
  state: ServiceStateSchema,
  pid: z.number().int().positive().nullable(),
  restarts: z.number().int().nonnegative(),
  last_exit: LastExitSchema.nullable(),
}) satisfies z.ZodType<ServiceStatus>;

/**
 * The `GET /v1/services` document.
 *
 * @example
 * ```ts
 * import { ServicesStatusSchema } from "./schema.ts";
 * console.assert(ServicesStatusSchema.safeParse({ services: [] }).success);
 * ```
 */
export const ServicesStatusSchema = z.strictObject({
  services: z.array(ServiceStatusSchema),
}) satisfies z.ZodType<ServicesStatus>;

// The schemas validate, the interfaces in types.ts document: neither may gain a field the other
// lacks.
true satisfies Same<z.output<typeof ServiceEntrySchema>, ServiceEntry>;
true satisfies Same<z.output<typeof ServicesListSchema>, ServicesList>;
true satisfies Same<z.output<typeof LastExitSchema>, LastExit>;
true satisfies Same<z.output<typeof ServiceStateSchema>, ServiceState>;
true satisfies Same<z.output<typeof ServiceStatusSchema>, ServiceStatus>;
true satisfies Same<z.output<typeof ServicesStatusSchema>, ServicesStatus>;
