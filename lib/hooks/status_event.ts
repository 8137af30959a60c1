/**
 * ty's OnStatusChange: which event a task status fires.
 *
 * @module
 */

/**
 * Maps a status (and its message) to the event it fires, or null for none:
 * `queued`/`processing` -> `task.started`; `done` -> `task.done`; `blocked` -> `task.failed` when
 * the message mentions "fail" or "error" (any case), else `task.blocked`.
 *
 * @param status The new status.
 * @param message The status message.
 * @returns The event, or null.
 * @example
 * ```ts
 * import { statusEvent } from "./status_event.ts";
 * console.assert(statusEvent("blocked", "Build ERROR") === "task.failed");
 * console.assert(statusEvent("backlog") === null);
 * ```
 */
export function statusEvent(status: string, message = ""): string | null {
  switch (status) {
    case "queued":
    case "processing":
      return "task.started";
    case "done":
      return "task.done";
    case "blocked":
      return /fail|error/i.test(message) ? "task.failed" : "task.blocked";
    default:
      return null;
  }
}
