/**
 * The plugin loader's entry point.
 *
 * @module
 */

import type { PluginIndex } from "./types.ts";
import { collectReports, foldReports } from "./reports.ts";

/**
 * Options of {@linkcode loadPlugins}.
 */
export interface LoadOptions {
  /** File-system calls and plugin loads in flight at once; default 64. */
  concurrency?: number;
  /**
   * Ends the load (it then rejects with the signal's reason): a load counts against the call's
   * deadline, and SIGINT/SIGTERM end it.
   */
  signal?: AbortSignal;
  /**
   * When the load gives up, on the `performance.now()` clock, rejecting with a `TimeoutError`:
   * the directory walk is synchronous, so only the clock can end it early.
   */
  deadline?: number;
}

/**
 * Loads every plugin under `dir`, forgivingly: a bad plugin is skipped with one warning and never
 * stops the others; a bad hook, action or service is dropped with a warning and the rest of its
 * plugin is kept. A missing `dir` holds no plugins (and gives no warning). Never throws for
 * anything found on disk. Requires `--allow-read`.
 *
 * @param dir The plugins dir (see `pluginsDir()` in `lib/dirs.ts`).
 * @param options The concurrency bound.
 * @returns The index: plugins sorted by name, paths absolute, and the warnings.
 * @example
 * ```ts
 * import { loadPlugins } from "./load.ts";
 * const index = await loadPlugins("/nonexistent");
 * console.assert(index.plugins.length === 0 && index.warnings.length === 0);
 * ```
 */
export async function loadPlugins(dir: string, options: LoadOptions = {}): Promise<PluginIndex> {
  const collected = await collectReports(dir, options);
  const { plugins, warnings } = foldReports(collected);
  return { dir: collected.root, plugins, warnings };
}
