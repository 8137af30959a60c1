/**
 * Records every path the loader looks at, so the index cache can tell later whether anything it
 * depended on changed. Recording happens only inside {@linkcode observing}; elsewhere it costs
 * one lookup.
 *
 * @module
 */

import { AsyncLocalStorage } from "node:async_hooks";

const store = new AsyncLocalStorage<Set<string>>();

/** Notes that the loader's result depends on `path` (present or missing). */
export function observe(path: string): void {
  store.getStore()?.add(path);
}

/**
 * Runs `fn`, collecting every path observed while it runs (including in its async work).
 *
 * @param fn The load.
 * @returns Its result and the observed paths.
 * @example
 * ```ts
 * import { observe, observing } from "./_observe.ts";
 * const { paths } = await observing(async () => observe("/x"));
 * console.assert(paths.has("/x"));
 * ```
 */
export async function observing<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; paths: Set<string> }> {
  const paths = new Set<string>();
  const result = await store.run(paths, fn);
  return { result, paths };
}
