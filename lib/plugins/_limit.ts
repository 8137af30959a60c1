/**
 * A concurrency bound: file checks run many at once, but never more than the bound, so a plugins
 * dir of thousands neither crawls one file at a time nor runs out of file descriptors.
 *
 * @module
 */

/** Runs `task` once a slot is free. */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * Creates a bound of `max` tasks at once. Tasks wait in the order they arrive.
 *
 * @param max Tasks running at once (at least 1).
 * @returns The limiter.
 * @example
 * ```ts
 * import { createLimit } from "./_limit.ts";
 * const limit = createLimit(2);
 * const sizes = await Promise.all(["a", "bb"].map((s) => limit(async () => s.length)));
 * console.assert(sizes.join() === "1,2");
 * ```
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
