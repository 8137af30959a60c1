/**
 * Zod schemas of the daemon's request bodies: the single source of truth of what each endpoint
 * accepts. Unknown fields are ignored; a missing `task` is the empty task, as on the command
 * line. Loaded lazily (by the handlers, on their first request); the interfaces beside them are
 * erased type imports.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "./schema.ts";
import type { Task } from "../events.ts";
import { TaskSchema } from "./task.ts";

const task = TaskSchema.optional();
const message = z.string().default("");

/** `POST /v1/route` and `POST /v1/actions/{plugin}/{action}`: `{"task"?}`. */
export const TaskBodySchema = z.object({ task });

/** `POST /v1/placement`: `{"task"?, "remote_required"?}`. */
export const PlacementBodySchema = z.object({
  task,
  remote_required: z.boolean().default(false),
});

/** `POST /v1/events/{event}`: `{"task"?, "message"?}`. */
export const EventBodySchema = z.object({ task, message });

/** `POST /v1/status-change`: `{"task"?, "status", "message"?}`. */
export const StatusChangeBodySchema = z.object({
  task,
  status: z.string().min(1),
  message,
});

// The schemas validate, the interfaces document: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof TaskBodySchema>, TaskBody>;
true satisfies Same<z.output<typeof PlacementBodySchema>, PlacementBody>;
true satisfies Same<z.output<typeof EventBodySchema>, EventBody>;
true satisfies Same<z.output<typeof StatusChangeBodySchema>, StatusChangeBody>;

/** The body of `POST /v1/route` and `POST /v1/actions/{plugin}/{action}`, as parsed. */
export interface TaskBody {
  /** The task; when missing, the empty task, as on the command line. */
  task?: Task;
}

/** The body of `POST /v1/placement`, as parsed (defaults filled). */
export interface PlacementBody {
  /** The task to place; when missing, the empty task. */
  task?: Task;
  /** Handlers are told the task must not run locally; default false. (No target is still 200.) */
  remote_required: boolean;
}

/** The body of `POST /v1/events/{event}`, as parsed (defaults filled). */
export interface EventBody {
  /** The task the event is about; when missing, the empty task. */
  task?: Task;
  /** Given to hooks as `TASK_MESSAGE`; default `""`. */
  message: string;
}

/** The body of `POST /v1/status-change`, as parsed (defaults filled). */
export interface StatusChangeBody {
  /** The task whose status changed; when missing, the empty task. */
  task?: Task;
  /** The new status, not empty: it picks the event, as `tyhooks status-change` does. */
  status: string;
  /** Given to hooks as `TASK_MESSAGE`, and read for "fail" or "error" on `blocked`. */
  message: string;
}
