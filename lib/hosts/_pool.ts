/**
 * Bounded concurrency for work over many hosts (`pick-host` probes, `hosts sync`).
 *
 * @module
 */

/**
 * Calls `fn` for every item, at most `limit` at a time. A fixed set of workers pulls from the list,
 * so one slow item holds one slot, never a whole wave; items start in list order.
 *
 * @param limit Calls running at once (at least 1).
 * @param fn Called with each item and its index; must not reject (results are the caller's).
 */
export async function eachBounded<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await fn(items[index], index);
    }
  };
  const workers = Math.max(1, Math.min(limit, items.length));
  await Promise.all(Array.from({ length: workers }, worker));
}
