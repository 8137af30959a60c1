/**
 * Zod schemas of the daemon's request bodies: the single source of truth of what each endpoint
 * accepts. Unknown fields are ignored; a missing `task` is the empty task, as on the command
 * line. Loaded lazily (by the handlers, on their first request).
 *
 * @module
 */

import { z } from "zod";
import { TaskSchema } from "../task_schema.ts";

const task = TaskSchema.optional();
const message = z.string().default("");

/**
 * `POST /v1/route` and `POST /v1/actions/{plugin}/{action}`: `{"task"?}`.
 *
 * @example
 * ```ts
 * import { TaskBodySchema } from "./schemas.ts";
 * console.assert(TaskBodySchema.parse({}).task === undefined);
 * ```
 */
export const TaskBodySchema: z.ZodObject<{ task: z.ZodOptional<typeof TaskSchema> }> = z.object({
  task,
});

/**
 * `POST /v1/placement`: `{"task"?, "remote_required"?}`.
 *
 * @example
 * ```ts
 * import { PlacementBodySchema } from "./schemas.ts";
 * console.assert(PlacementBodySchema.parse({}).remote_required === false);
 * ```
 */
export const PlacementBodySchema: z.ZodObject<{
  task: z.ZodOptional<typeof TaskSchema>;
  remote_required: z.ZodDefault<z.ZodBoolean>;
}> = z.object({ task, remote_required: z.boolean().default(false) });

/**
 * `POST /v1/events/{event}`: `{"task"?, "message"?}`.
 *
 * @example
 * ```ts
 * import { EventBodySchema } from "./schemas.ts";
 * console.assert(EventBodySchema.parse({ message: "ok" }).message === "ok");
 * ```
 */
export const EventBodySchema: z.ZodObject<{
  task: z.ZodOptional<typeof TaskSchema>;
  message: z.ZodDefault<z.ZodString>;
}> = z.object({ task, message });

/**
 * `POST /v1/status-change`: `{"task"?, "status", "message"?}`.
 *
 * @example
 * ```ts
 * import { StatusChangeBodySchema } from "./schemas.ts";
 * console.assert(!StatusChangeBodySchema.safeParse({}).success);
 * ```
 */
export const StatusChangeBodySchema: z.ZodObject<{
  task: z.ZodOptional<typeof TaskSchema>;
  status: z.ZodString;
  message: z.ZodDefault<z.ZodString>;
}> = z.object({ task, status: z.string().min(1), message });
