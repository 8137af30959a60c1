/**
 * Loading a plugins dir: finding the plugin dirs (`discover.ts`), loading each (forgivingly, in
 * `plugin_dir.ts`) under a bound, and folding the reports into the index: a skipped plugin is
 * left out with exactly one warning. Two plugins sharing a name both load, as in ty; only
 * `plugins validate` reports it.
 *
 * @module
 */

import { resolve } from "../paths.ts";
import type { LoadWarning, Observe, Plugin, PluginIndex } from "./types.ts";
import { byBytes, discoverPluginDirs } from "./discover.ts";
import { loadPluginDir, type PluginReport } from "./plugin_dir.ts";
import { createLimit } from "../async.ts";

/** Options of {@linkcode loadPlugins}. */
export interface LoadOptions {
  /** File-system calls and plugin loads in flight at once; default 64. */
  concurrency?: number;
  /** Ends the load, rejecting with the signal's reason (a deadline, SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** When the load gives up, a `TimeoutError` (`performance.now()`): the walk is synchronous. */
  deadline?: number;
}

/**
 * Loads every plugin under `dir`, forgivingly: a bad plugin is skipped with one warning and never
 * stops the others; a bad hook, action or service is dropped with a warning and the rest of its
 * plugin is kept. A missing `dir` holds no plugins (and gives no warning). Never throws for
 * anything found on disk. Requires `--allow-read`.
 *
 * @example
 * ```ts
 * import { loadPlugins } from "./load.ts";
 * const index = await loadPlugins("/nonexistent");
 * console.assert(index.plugins.length === 0 && index.warnings.length === 0);
 * ```
 */
export async function loadPlugins(dir: string, options: LoadOptions = {}): Promise<PluginIndex> {
  const collected = await collectReports(dir, options);
  return { dir: collected.root, ...foldReports(collected) };
}

/** Options of {@linkcode collectReports}. */
export interface CollectOptions extends LoadOptions {
  /** Called with every path the load depends on, before it is read (for the index cache). */
  observe?: Observe;
}

/** Every plugin dir's report, in path order, and the warnings of discovery. */
export interface Collected {
  /** The plugins dir, absolute. */
  root: string;
  reports: PluginReport[];
  warnings: LoadWarning[];
}

/** Finds and loads every plugin dir. Requires `--allow-read`. */
export async function collectReports(
  dir: string,
  options: CollectOptions = {},
): Promise<Collected> {
  const root = resolve(dir);
  const limit = createLimit(options.concurrency ?? 64);
  const { signal, deadline, observe } = options;
  const found = discoverPluginDirs(root, { signal, deadline, observe });
  // The dirs above plugins are checked once per load, whatever the number of plugins below.
  const above = new Map();
  const reports = await Promise.all(
    found.dirs.map((d) =>
      limit(() => {
        signal?.throwIfAborted();
        return loadPluginDir(root, d, { signal, observe, above });
      })
    ),
  );
  // A manifest read cut short by the signal reads as unreadable: the load as a whole failed.
  signal?.throwIfAborted();
  return { root, reports, warnings: found.warnings };
}

/** Options of {@linkcode foldReports}. */
export interface FoldOptions {
  /** Also list the dropped entries of plugins left out (for the lint); default: one warning. */
  everyProblem?: boolean;
}

/**
 * Builds the index from reports in path order: plugins sorted by name (two of one name in path
 * order, so the first is the one a command naming it takes), warnings in path order.
 */
export function foldReports(
  collected: Collected,
  options: FoldOptions = {},
): { plugins: Plugin[]; warnings: LoadWarning[] } {
  const plugins: Plugin[] = [];
  const warnings = [...collected.warnings];
  for (const { plugin, problems, skip } of collected.reports) {
    if (plugin !== null || options.everyProblem) warnings.push(...problems);
    if (plugin !== null) plugins.push(plugin);
    else if (skip) warnings.push(skip);
  }
  // Stable: plugins sharing a name stay in path order.
  plugins.sort((a, b) => byBytes(a.name, b.name));
  return { plugins, warnings };
}
