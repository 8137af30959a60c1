/**
 * `plugins validate`: every load warning (the dropped entries of skipped plugins included), and
 * the strict half (the strict zod schema, names used twice, event names that look like typos),
 * each with file, line and column.
 *
 * @module
 */

import { dirname, resolve } from "../paths.ts";
import type { LoadWarning } from "./types.ts";
import { type Collected, collectReports, foldReports, type LoadOptions } from "./load.ts";
import { loadPluginDir, nameAt, type PluginReport } from "./plugin_dir.ts";
import { locate, located } from "./read_manifest.ts";
import {
  cannotStart,
  describeIssue,
  pathText,
  sharedName,
  unknownEvent,
  unknownKey,
} from "./messages.ts";
import { closest, quoted } from "../text.ts";
import { isRecord } from "../wire/json.ts";
import { SETTING_KEYS } from "./hook_settings.ts";
import { KNOWN_EVENTS } from "../events.ts";

/** The lint's verdict. */
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
  const root = dirname(full);
  return await lint({ root, reports: [await loadPluginDir(root, full)], warnings: [] });
}

async function lint(collected: Collected): Promise<ValidationResult> {
  const { warnings } = foldReports(collected, { everyProblem: true });
  const problems = [...warnings, ...await sharedNames(collected.reports)];
  // A place the loader already complained about needs no second, zod-worded message.
  const seen = new Set(warnings.map(where));
  for (const report of collected.reports) {
    problems.push(...report.lint);
    problems.push(...(await strictProblems(report)).filter((p) => !seen.has(where(p))));
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

// Each plugin whose name an earlier one (in path order) already has. Where the name is written is
// looked up (a second, slower parse) only for these.
async function sharedNames(reports: readonly PluginReport[]): Promise<LoadWarning[]> {
  const firstDir = new Map<string, string>();
  const found: LoadWarning[] = [];
  for (const report of reports) {
    if (report.plugin === null) continue;
    const { name } = report.plugin;
    const first = firstDir.get(name);
    if (first === undefined) {
      firstDir.set(name, report.relDir);
      continue;
    }
    const at = await nameAt(report);
    found.push({
      plugin: name,
      path: report.manifest,
      line: at?.line ?? null,
      column: at?.column ?? null,
      message: sharedName(name, first),
    });
  }
  return found;
}

// The strict half: one parsed manifest against the strict schema, each problem with a line and
// column; nothing for a manifest that could not be parsed (the loader already said why).
async function strictProblems(report: PluginReport): Promise<LoadWarning[]> {
  const parsed = report.parsed;
  if (parsed === null) return [];
  const { ActionSchema, MANIFEST_KEYS, ManifestSchema, ServiceSchema } = await import(
    "./manifest_schema.ts"
  );
  const positions = await located(parsed);
  const problems: LoadWarning[] = [];
  const add = (message: string, at: readonly PropertyKey[], key = false) => {
    const { line, column } = locate(positions, at, { key });
    problems.push({ plugin: report.name, path: report.manifest, line, column, message });
  };
  const result = ManifestSchema.safeParse(parsed.typed, { reportInput: true });
  for (const issue of result.error?.issues ?? []) {
    if (issue.code !== "unrecognized_keys") {
      add(describeIssue(issue), issue.path);
      continue;
    }
    const known = issue.path.length === 0
      ? MANIFEST_KEYS
      : issue.path[0] === "actions"
      ? Object.keys(ActionSchema.shape)
      : issue.path[0] === "tyhooks"
      ? SETTING_KEYS
      : Object.keys(ServiceSchema.shape);
    for (const key of issue.keys) {
      add(unknownKey(key, pathText(issue.path), closest(key, known)), [...issue.path, key], true);
    }
  }
  if (parsed.extraDocuments !== null) {
    const { count, line, column } = parsed.extraDocuments;
    const [noun, verb] = count === 1 ? ["document", "is"] : ["documents", "are"];
    const message =
      `plugin.yaml holds ${count} more YAML ${noun} after the first, which ${verb} not read (as in ty)`;
    problems.push({ plugin: report.name, path: report.manifest, line, column, message });
  }
  const typed = parsed.typed;
  if (isRecord(typed) && isRecord(typed.hooks)) {
    for (const event of Object.keys(typed.hooks)) {
      const suggestion = closest(event, KNOWN_EVENTS);
      if (suggestion !== undefined) add(unknownEvent(event, suggestion), ["hooks", event], true);
    }
  }
  // Loaded, as ty loads them, but they cannot start.
  const { execFormatProblem } = await import("../process/group.ts");
  for (const { path, written, what, at } of report.scripts) {
    const problem = execFormatProblem(path);
    if (problem !== null) add(cannotStart(`${what}: script ${quoted(written)}`, path, problem), at);
  }
  return problems;
}
