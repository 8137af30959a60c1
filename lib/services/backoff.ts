/**
 * The restart policy as a pure function: given how a service ended and its streak of quick
 * exits, restart it (after how long), leave it stopped, or give up on it.
 *
 * @module
 */

import type { RestartPolicy } from "../plugins/types.ts";

/** Timings of the restart policy. */
export interface BackoffOptions {
  /** Delay before the first restart of a streak; default 1 s. */
  initialMs: number;
  /** The delay doubles per quick exit up to this; default 30 s. */
  maxMs: number;
  /** A run this long ends the streak: the next delay is `initialMs` again; default 10 s. */
  resetAfterMs: number;
  /** Quick failures in a row after which the service is given up; default 5. */
  maxFailures: number;
}

/** SPEC's timings. */
export const DEFAULT_BACKOFF: Readonly<BackoffOptions> = Object.freeze({
  initialMs: 1000,
  maxMs: 30_000,
  resetAfterMs: 10_000,
  maxFailures: 5,
});

/**
 * Consecutive runs shorter than `resetAfterMs`. Exits of any kind set the delay; only failures
 * count toward giving up, so a quick clean-exit loop under `always` is slowed to one run per
 * `maxMs` but never given up (it may be a periodic job), while a crash loop is.
 */
export interface Streak {
  /** Quick runs in a row, however they ended: they set the delay. */
  quickExits: number;
  /** Quick failures in a row: at `maxFailures` the service is given up. */
  quickFailures: number;
}

export const NO_STREAK: Readonly<Streak> = Object.freeze({ quickExits: 0, quickFailures: 0 });

/** How one run ended, as far as the policy cares. */
export interface RunEnd {
  /** Non-zero exit, death by signal, or could not start. */
  failed: boolean;
  /** How long it ran; a run of `resetAfterMs` or more ends the streak. */
  uptimeMs: number;
}

/** What to do next. */
export type Step =
  | { kind: "restart"; delayMs: number; streak: Streak }
  | { kind: "stop"; reason: string; streak: Streak }
  | { kind: "give_up"; streak: Streak };

/** What follows the end of a run, with the streak to carry into the next decision. */
export function nextStep(
  policy: RestartPolicy,
  end: RunEnd,
  streak: Streak,
  options: BackoffOptions = DEFAULT_BACKOFF,
): Step {
  const base = end.uptimeMs >= options.resetAfterMs ? NO_STREAK : streak;
  const next: Streak = {
    quickExits: base.quickExits + 1,
    quickFailures: end.failed ? base.quickFailures + 1 : 0,
  };
  if (policy === "never") return { kind: "stop", reason: "restart policy is never", streak: next };
  if (policy === "on-failure" && !end.failed) {
    return { kind: "stop", reason: "exited cleanly under restart policy on-failure", streak: next };
  }
  if (next.quickFailures >= options.maxFailures) return { kind: "give_up", streak: next };
  const delayMs = Math.min(options.maxMs, options.initialMs * 2 ** (next.quickExits - 1));
  return { kind: "restart", delayMs, streak: next };
}
