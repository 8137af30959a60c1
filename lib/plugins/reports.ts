/**
 * From a plugins dir to reports (one per plugin dir, loaded concurrently under a bound), and
 * from reports to the index: the skipped plugins and the later of two plugins sharing a name
 * are left out, each with exactly one warning.
 *
 * @module
 */

import { resolve } from "../_path.ts";
import type { LoadWarning, Plugin } from "./types.ts";
import type { PluginReport } from "./inspect_plugin.ts";
import { createLimit } from "../_util.ts";
import { REASONS, skipped } from "./messages.ts";
import { byCodeUnit, discoverPluginDirs } from "./discover.ts";

/** Options of {@linkcode collectReports}. */
export interface CollectOptions {
  /** File-system calls and plugin loads in flight at once; default 64. */
  concurrency?: number;
  /** Ends the load: it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** When the load gives up, on the `performance.now()` clock (see `DiscoverOptions`). */
  deadline?: number;
}

/** Every plugin dir's report, in path order, and the warnings of discovery. */
export interface Collected {
  /** The plugins dir, absolute. */
  root: string;
  reports: PluginReport[];
  warnings: LoadWarning[];
}

/**
 * Finds and loads every plugin dir. zod and yaml are imported only when there is a plugin to
 * load. Requires `--allow-read`.
 *
 * @param options The concurrency bound.
 */
export async function collectReports(
  dir: string,
  options: CollectOptions = {},
): Promise<Collected> {
  const root = resolve(dir);
  const limit = createLimit(options.concurrency ?? 64);
  const { signal, deadline } = options;
  const found = discoverPluginDirs(root, { signal, deadline });
  if (found.dirs.length === 0) return { root, reports: [], warnings: found.warnings };
  const { inspectPlugin } = await import("./inspect_plugin.ts");
  const reports = await Promise.all(
    found.dirs.map((d) =>
      limit(() => {
        signal?.throwIfAborted();
        return inspectPlugin(root, d, { signal });
      })
    ),
  );
  // A manifest read cut short by the signal reads as unreadable: the load as a whole failed.
  signal?.throwIfAborted();
  return { root, reports, warnings: found.warnings };
}

/** Options of {@linkcode foldReports}. */
export interface FoldOptions {
  /**
   * Also list the dropped entries of plugins that are left out (for the lint). Default false:
   * a plugin left out gets exactly one warning.
   */
  everyProblem?: boolean;
}

/**
 * Builds the index from reports: plugins sorted by name, warnings in path order.
 *
 * @param collected The reports, in path order.
 * @param options Whether to keep every problem.
 * @returns The plugins and the warnings.
 */
export function foldReports(
  collected: Collected,
  options: FoldOptions = {},
): { plugins: Plugin[]; warnings: LoadWarning[] } {
  const plugins: Plugin[] = [];
  const warnings = [...collected.warnings];
  const firstDir = new Map<string, string>();
  for (const report of collected.reports) {
    const { plugin } = report;
    const leftOut = plugin === null || firstDir.has(plugin.name);
    if (!leftOut || options.everyProblem) warnings.push(...report.problems);
    if (plugin === null) {
      if (report.skip) warnings.push(report.skip);
      continue;
    }
    const first = firstDir.get(plugin.name);
    if (first !== undefined) {
      warnings.push({
        plugin: plugin.name,
        path: report.manifest,
        line: report.nameAt?.line ?? null,
        column: report.nameAt?.column ?? null,
        message: skipped(plugin.name, report.relDir, REASONS.duplicate(first)),
      });
      continue;
    }
    firstDir.set(plugin.name, report.relDir);
    plugins.push(plugin);
  }
  plugins.sort((a, b) => byCodeUnit(a.name, b.name));
  return { plugins, warnings };
}
