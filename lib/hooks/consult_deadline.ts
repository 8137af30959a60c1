/**
 * The whole-call deadline of the consulted calls (`route`, `place`, `tool pre`), which ask their
 * handlers one after another: however many handlers are installed, the caller's spawn path waits
 * no longer than the deadline (SPEC: "Timeouts").
 *
 * @module
 */

import { DRAIN_MS } from "../process/run_script.ts";

/**
 * Options every consulted call takes.
 *
 * @example
 * ```ts
 * import { Runner } from "./runner.ts";
 * import { EMPTY_TASK } from "../task.ts";
 * import type { ConsultOptions } from "./consult_deadline.ts";
 * const options: ConsultOptions = { deadlineMs: 2000 };
 * const runner = new Runner({ dir: "/none", plugins: [], warnings: [] });
 * const placement = await runner.resolvePlacement(EMPTY_TASK, options);
 * console.assert(placement.target === "");
 * ```
 */
export interface ConsultOptions {
  /**
   * Bound on the whole call, in ms; default the per-handler timeout of the call (so one handler
   * may use all of it, and several share it).
   */
  deadlineMs?: number;
}

/**
 * SIGTERM-to-SIGKILL grace for consulted handlers: at most this, whatever the runner's grace.
 * A router or guard has a caller waiting on it; one that ignores SIGTERM gets less patience
 * than an event hook, which keeps the kill's share of the deadline small.
 *
 * @example
 * ```ts
 * import { CONSULT_GRACE_MS, startDeadline } from "./consult_deadline.ts";
 * console.assert(startDeadline(5000).next(5000, 500)?.graceMs === CONSULT_GRACE_MS);
 * ```
 */
export const CONSULT_GRACE_MS = 200;

/**
 * The shortest timeout a handler is started with; below it a script can hardly start. A later
 * handler that cannot get this much (and still be killed before the deadline) is not asked. The
 * first handler is always asked, with at least this much, so that a tiny deadline still asks
 * someone: the call may then end up to MIN_HANDLER_MS + CONSULT_GRACE_MS + DRAIN_MS (350 ms)
 * past a deadline shorter than that. This is a deliberate exception to SPEC's "never waits
 * longer than the deadline" (the consulted-hooks issue allows deadline + 1 s), so that a tiny
 * deadline still asks someone.
 *
 * @example
 * ```ts
 * import { MIN_HANDLER_MS, startDeadline } from "./consult_deadline.ts";
 * // Even a deadline too short to be useful asks its first handler, for MIN_HANDLER_MS.
 * console.assert(startDeadline(10).next(5000, 500)?.timeoutMs === MIN_HANDLER_MS);
 * ```
 */
export const MIN_HANDLER_MS = 50;

/**
 * What one handler runs with.
 *
 * @example
 * ```ts
 * import { type HandlerBudget, startDeadline } from "./consult_deadline.ts";
 * const budget: HandlerBudget | null = startDeadline(1000).next(5000, 500);
 * console.assert(budget !== null && budget.timeoutMs < 1000);
 * ```
 */
export interface HandlerBudget {
  /** The handler's timeout: its own, or less when the deadline is nearer. */
  timeoutMs: number;
  /** Its SIGTERM-to-SIGKILL grace: at most {@linkcode CONSULT_GRACE_MS}. */
  graceMs: number;
}

/**
 * A started deadline: hands out per-handler budgets until it is spent.
 *
 * @example
 * ```ts
 * import { type Deadline, startDeadline } from "./consult_deadline.ts";
 * const deadline: Deadline = startDeadline(300);
 * console.assert(deadline.next(5000, 500) !== null); // the first handler is always asked
 * console.assert(deadline.next(5000, 500) === null); // no room left for a second one
 * ```
 */
export interface Deadline {
  /** The whole-call bound, in ms. */
  readonly deadlineMs: number;
  /**
   * The budget of the next handler, or null when the deadline is spent (the handler is not
   * asked).
   *
   * @param timeoutMs The handler's own timeout.
   * @param graceMs The runner's grace.
   */
  next(timeoutMs: number, graceMs: number): HandlerBudget | null;
}

/**
 * Starts a deadline of `deadlineMs` from now.
 *
 * runScript returns within timeout + grace + DRAIN_MS. To keep the whole call inside the
 * deadline, each handler's timeout is the smaller of its own timeout and what is left of the
 * deadline minus that kill-and-drain reserve (with the grace lowered to CONSULT_GRACE_MS). The
 * price: a lone handler under the default deadline (= its timeout) is cut off about 300 ms
 * before its nominal timeout. That is the deadline doing its job: SPEC promises the caller never
 * waits longer than it. For the same reason, once a handler has used up the deadline, the
 * remaining ones are not asked rather than started with a few milliseconds each.
 *
 * @param deadlineMs The bound on the whole call.
 * @returns The deadline.
 * @example
 * ```ts
 * import { startDeadline } from "./consult_deadline.ts";
 * const deadline = startDeadline(5000);
 * const budget = deadline.next(5000, 500);
 * console.assert(budget !== null && budget.timeoutMs <= 4700 && budget.graceMs === 200);
 * ```
 */
export function startDeadline(deadlineMs: number): Deadline {
  const end = performance.now() + deadlineMs;
  let asked = 0;
  return {
    deadlineMs,
    next(timeoutMs, graceMs) {
      const grace = Math.min(graceMs, CONSULT_GRACE_MS);
      const room = Math.floor(end - performance.now() - grace - DRAIN_MS);
      if (asked > 0 && room < MIN_HANDLER_MS) return null;
      asked++;
      return { timeoutMs: Math.min(timeoutMs, Math.max(room, MIN_HANDLER_MS)), graceMs: grace };
    },
  };
}

/**
 * Why a handler was not asked: the call's deadline was spent before its turn. It counts as not
 * answering.
 *
 * @param deadline The spent deadline.
 * @returns The reason, for a log line or a tool-call verdict.
 * @example
 * ```ts
 * import { notAskedReason, startDeadline } from "./consult_deadline.ts";
 * console.assert(notAskedReason(startDeadline(100)) === "not asked: the 100 ms deadline was spent");
 * ```
 */
export function notAskedReason(deadline: Deadline): string {
  return `not asked: the ${deadline.deadlineMs} ms deadline was spent`;
}
