/**
 * Timers that never outlive their use: every wait here clears its timer when it ends, so a
 * stopped supervisor leaves nothing pending (and Deno's test sanitizers stay quiet).
 *
 * @module
 */

/**
 * Waits `ms`, or less when `signal` aborts first. Never rejects.
 *
 * @param ms How long.
 * @param signal Ends the wait early.
 * @returns True when the full time passed, false when aborted.
 * @example
 * ```ts
 * import { sleep } from "./_timers.ts";
 * console.assert(await sleep(1) === true);
 * ```
 */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/**
 * Waits for `promise`, at most `ms`.
 *
 * @param promise What to wait for (its rejection counts as settled).
 * @param ms The bound.
 * @returns True when it settled in time.
 * @example
 * ```ts
 * import { within } from "./_timers.ts";
 * console.assert(await within(Promise.resolve(), 10) === true);
 * ```
 */
export async function within(promise: Promise<unknown>, ms: number): Promise<boolean> {
  const stop = new AbortController();
  const settled = promise.then(() => true, () => true);
  const result = await Promise.race([settled, sleep(ms, stop.signal).then(() => false)]);
  stop.abort();
  return result;
}
