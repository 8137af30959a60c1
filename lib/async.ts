/**
 * Waiting, for the whole project: clearable timeouts, `sleep`, `within`, durations, `createLimit`.
 * `AbortSignal.timeout` cannot be cancelled and keeps about 2.5 KB until it fires (a daemon at 900
 * requests a second with 15 s timeouts would carry tens of thousands); `setTimeout` costs every
 * CLI call about 5 ms in Deno 2.9 (it loads Node's timers). So the timeouts here share one pending
 * `AbortSignal.timeout`, due by the earliest live deadline, and clearing one just forgets it: one
 * signal per shared-timer period when timeouts have a few fixed lengths, as the runner's do.
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
  fire: () => void;
}

/** The shared timer: its due time, and whether it is listened to (which keeps Deno alive). */
interface Armed {
  at: number;
  signal: AbortSignal;
  listening: boolean;
}

/**
 * The longest a timer waits: 2^31 - 1 ms, about 24.8 days (timers hold 32-bit milliseconds). A
 * later deadline is reached in several such steps; a longer duration is not one.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

const live = new Set<Entry>();
let armed: Armed | null = null;

function listen(timer: Armed, on: boolean): void {
  if (timer.listening === on) return;
  timer.listening = on;
  if (on) timer.signal.addEventListener("abort", fire, { once: true });
  else timer.signal.removeEventListener("abort", fire);
}

function arm(at: number): void {
  const delay = Math.min(MAX_TIMER_MS, Math.max(0, Math.ceil(at - performance.now())));
  const next = { at, signal: AbortSignal.timeout(delay), listening: false };
  if (armed !== null) listen(armed, false);
  armed = next;
  listen(next, true);
}

function fire(): void {
  armed = null;
  // Timers and performance.now() can disagree by a fraction of a millisecond.
  const now = performance.now() + 1;
  const due: Entry[] = [];
  let next = Infinity;
  for (const entry of live) {
    if (entry.at <= now) due.push(entry);
    else if (entry.at < next) next = entry.at;
  }
  for (const entry of due) live.delete(entry);
  // Several come due at once when the event loop was late (a busy machine): still in due order.
  due.sort((a, b) => a.at - b.at);
  // Re-armed before the aborts: their listeners may start or clear timeouts of their own.
  if (next < Infinity) arm(next);
  for (const entry of due) entry.fire();
}

/**
 * Starts a timeout of `ms` milliseconds (finite, at least 0). Like `setTimeout`, it keeps the
 * process alive until it fires or is cleared.
 */
export function clearableTimeout(ms: number): ClearableTimeout {
  const controller = new AbortController();
  const abort = () => controller.abort(new DOMException("Signal timed out.", "TimeoutError"));
  return { signal: controller.signal, clear: onTimeout(ms, abort).clear };
}

/**
 * Calls `callback` after `ms` milliseconds unless cleared first: {@linkcode clearableTimeout}
 * without the signal, for a hot path that needs no listeners.
 */
export function onTimeout(ms: number, callback: () => void): { clear(): void } {
  checkDuration(ms, "timeout");
  const entry = { at: performance.now() + ms, fire: callback };
  if (armed !== null && !armed.signal.aborted && armed.at <= entry.at) {
    // Due no later than this one: it will fire, find this one not due yet, and re-arm.
    listen(armed, true);
  } else {
    arm(entry.at);
  }
  live.add(entry);
  return {
    clear() {
      live.delete(entry);
      // Nothing left to time: stop listening so the process may exit, but keep the timer for
      // the next timeout (a daemon then makes one timer per timeout period, not per call).
      if (live.size === 0 && armed !== null) listen(armed, false);
    },
  };
}

/** Waits `ms`, or less when `signal` aborts first: true when the full time passed. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  const timeout = clearableTimeout(ms);
  return new Promise((resolve) => {
    const onAbort = () => {
      timeout.clear();
      resolve(false);
    };
    timeout.signal.addEventListener("abort", () => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, { once: true });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Waits for `promise` to settle (or reject), at most `ms`: true when it settled in time. */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const stop = new AbortController();
  const settled = promise.then(() => true, () => true);
  const result = await Promise.race([settled, sleep(ms, stop.signal).then(() => false)]);
  stop.abort();
  return result;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/** `500ms`, `15s`, `2m` or plain seconds (`1.5`) in milliseconds; undefined when not one. */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (match === null) return undefined;
  const ms = Number(match[1]) * UNITS[match[2] ?? "s"];
  return Number.isFinite(ms) && ms <= MAX_TIMER_MS ? Math.round(ms) : undefined;
}

/**
 * Runs `task` once a slot is free: hook runs of a command, file checks of a load, ssh sessions of
 * a host pick. The daemon's `ProcLimit` (two gates over shared slots) hands out the same kind.
 */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * A bound of `max` tasks at once (at least 1), started in the order they arrive: many file checks
 * or hook runs at once, never so many that the file descriptors run out.
 */
export function createLimit(max: number): Limit {
  const slots = Math.max(1, Math.floor(max));
  let running = 0;
  const waiting: (() => void)[] = [];
  return async function limit<T>(task: () => Promise<T>): Promise<T> {
    if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next task, so `running` never overshoots.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/**
 * Throws a `RangeError` naming `what` unless `ms` is a finite number of at least 0: a library
 * caller's bad duration is refused before anything starts, never half way through.
 */
export function checkDuration(ms: unknown, what: string): void {
  if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
    throw new RangeError(`Invalid ${what}: ${ms} ms (must be a finite number, at least 0)`);
  }
}
