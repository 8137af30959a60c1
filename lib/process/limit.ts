/**
 * The one bound on how many tasks run at once: hook runs of a command, file checks of a load,
 * ssh sessions of a host pick. The daemon's `ProcLimit` (two gates over shared slots) hands out
 * the same {@linkcode Limit}.
 *
 * @module
 */

/** Runs `task` once a slot is free. */
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
