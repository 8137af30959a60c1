/**
 * Timeouts that can be cleared and leave nothing behind once cleared.
 *
 * `AbortSignal.timeout` cannot be cancelled: each one keeps its signal and a timer (about 2.5 KB,
 * most of it outside the JS heap) until it fires. A daemon answering 900 requests a second with
 * 15 s timeouts would carry tens of thousands of them. `setTimeout` can be cleared, but in Deno
 * 2.9 the first call of a process loads Node's timers (about 5 ms), which every CLI call would
 * pay. So the timeouts here share one pending `AbortSignal.timeout`, due no later than the
 * earliest live deadline; clearing a timeout just forgets it.
 *
 * @module
 */

/** A timeout in progress. */
export interface ClearableTimeout {
  /** Aborts with a `TimeoutError` DOMException when the time is up. */
  signal: AbortSignal;
  /** Forgets the timeout; its signal then never aborts. */
  clear(): void;
}

interface Entry {
  at: number;
  controller: AbortController;
}

/** The shared timer: its due time, and whether it is listened to (which keeps Deno alive). */
interface Armed {
  at: number;
  signal: AbortSignal;
  listening: boolean;
}

const live = new Set<Entry>();
let armed: Armed | null = null;

function listen(timer: Armed, on: boolean): void {
  if (timer.listening === on) return;
  timer.listening = on;
  if (on) timer.signal.addEventListener("abort", fire, { once: true });
  else timer.signal.removeEventListener("abort", fire);
}

function arm(at: number): void {
  if (armed !== null) listen(armed, false);
  const delay = Math.max(0, Math.ceil(at - performance.now()));
  armed = { at, signal: AbortSignal.timeout(delay), listening: false };
  listen(armed, true);
}

function fire(): void {
  armed = null;
  // Timers and performance.now() can disagree by a fraction of a millisecond.
  const now = performance.now() + 1;
  let next = Infinity;
  for (const entry of live) {
    if (entry.at <= now) {
      live.delete(entry);
      entry.controller.abort(new DOMException("Signal timed out.", "TimeoutError"));
    } else if (entry.at < next) {
      next = entry.at;
    }
  }
  if (next < Infinity) arm(next);
}

/**
 * Starts a timeout of `ms` milliseconds. Like `setTimeout`, it keeps the process alive until it
 * fires or is cleared.
 *
 * @param ms The time until the signal aborts.
 * @returns The signal and a `clear()` that cancels it.
 * @example
 * ```ts
 * import { clearableTimeout } from "./_timeout.ts";
 * const timeout = clearableTimeout(10);
 * await new Promise((resolve) => timeout.signal.addEventListener("abort", resolve));
 * console.assert(timeout.signal.reason.name === "TimeoutError");
 * ```
 */
export function clearableTimeout(ms: number): ClearableTimeout {
  const entry = { at: performance.now() + ms, controller: new AbortController() };
  live.add(entry);
  if (armed !== null && !armed.signal.aborted && armed.at <= entry.at) {
    // Due no later than this one: it will fire, find this one not due yet, and re-arm.
    listen(armed, true);
  } else {
    arm(entry.at);
  }
  return {
    signal: entry.controller.signal,
    clear() {
      live.delete(entry);
      // Nothing left to time: stop listening so the process may exit, but keep the timer for
      // the next timeout (a daemon then makes one timer per timeout period, not per call).
      if (live.size === 0 && armed !== null) listen(armed, false);
    },
  };
}
