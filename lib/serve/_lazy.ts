/**
 * A memoized dynamic import. `import()` of an already loaded module still costs a module-map
 * lookup and a promise per call, measurable on a hot endpoint; this pays it once.
 *
 * @module
 */

/**
 * Wraps `load` so it runs once; later calls return the same promise.
 *
 * @param load The import, e.g. `() => import("./schemas.ts")`.
 * @returns The memoized loader.
 * @example
 * ```ts
 * import { lazy } from "./_lazy.ts";
 * let loads = 0;
 * const get = lazy(() => Promise.resolve(++loads));
 * await get();
 * console.assert((await get()) === 1);
 * ```
 */
export function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined;
  return () => loaded ??= load();
}
