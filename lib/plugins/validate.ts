/**
 * `plugins validate` as a library call: every load warning (including the dropped entries of
 * plugins left out), unknown keys and type errors, each with file, line and column.
 *
 * @module
 */

import { dirname, resolve } from "../_path.ts";
import type { LoadWarning } from "./types.ts";
import { type Collected, collectReports, foldReports } from "./load.ts";
import type { LoadOptions } from "./load.ts";

/**
 * The lint's verdict.
 */
export interface ValidationResult {
  /** True when there is no problem at all. */
  ok: boolean;
  /** Sorted by plugin path, then line and column. */
  problems: LoadWarning[];
  /** How many plugin dirs were checked. */
  checked: number;
}

/**
 * Lints every plugin under `dir`, strictly. Requires `--allow-read`.
 *
 * @param options The concurrency bound.
 * @example
 * ```ts
 * import { validatePlugins } from "./validate.ts";
 * const result = await validatePlugins("/nonexistent");
 * console.assert(result.ok && result.problems.length === 0);
 * ```
 */
export async function validatePlugins(
  dir: string,
  options: LoadOptions = {},
): Promise<ValidationResult> {
  return await lint(await collectReports(dir, options));
}

/**
 * Lints one plugin dir (a folder holding `plugin.yaml`), strictly, as `plugins validate PATH`
 * does for a plugin's own repository. Requires `--allow-read`.
 */
export async function validatePluginDir(dir: string): Promise<ValidationResult> {
  const full = resolve(dir);
  const { inspectPlugin } = await import("./inspect_plugin.ts");
  const root = dirname(full);
  return await lint({ root, reports: [await inspectPlugin(root, full)], warnings: [] });
}

async function lint(collected: Collected): Promise<ValidationResult> {
  const { warnings } = foldReports(collected, { everyProblem: true });
  const problems = [...warnings];
  if (collected.reports.length > 0) {
    const { strictProblems } = await import("./inspect_plugin.ts");
    // A place the loader already complained about needs no second, zod-worded message.
    const seen = new Set(warnings.map(where));
    for (const report of collected.reports) {
      problems.push(...report.lint);
      problems.push(...strictProblems(report).filter((p) => !seen.has(where(p))));
    }
  }
  const order = new Map(collected.reports.map((r, i) => [r.manifest, i]));
  const rank = (p: LoadWarning) => order.get(p.path) ?? -1;
  problems.sort((a, b) =>
    rank(a) - rank(b) || (a.line ?? 0) - (b.line ?? 0) || (a.column ?? 0) - (b.column ?? 0)
  );
  return { ok: problems.length === 0, problems, checked: collected.reports.length };
}

function where(p: LoadWarning): string {
  return `${p.path}:${p.line}:${p.column}`;
}
