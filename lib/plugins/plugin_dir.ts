/**
 * Loads one plugin dir forgivingly: every usable entry kept, a located problem for each one
 * dropped, or the plugin skipped; the report is also what `plugins validate` lints. A well-formed
 * manifest needs neither zod (wording an odd entry) nor yaml (locating a problem).
 *
 * @module
 */

import { type Problem, REASONS, skipped } from "./messages.ts";
import type { FoundDir, LoadWarning, Observe, Plugin } from "./types.ts";
import {
  locate,
  located,
  MAX_MANIFEST_BYTES,
  type ParsedManifest,
  type Position,
  readManifest,
} from "./read_manifest.ts";
import { hasControl, quoted } from "../text.ts";
import { isRecord } from "../wire/json.ts";
import { dirname, join, relative } from "../paths.ts";
import { unsafeMode } from "../fs.ts";
import { buildPlugin, isUsable, type NamedScript } from "./build_plugin.ts";

/** Everything learned about one plugin dir. */
export interface PluginReport {
  /** Absolute plugin dir. */
  dir: string;
  /** The dir relative to the plugins dir, for messages. */
  relDir: string;
  /** Absolute path of its `plugin.yaml`. */
  manifest: string;
  /** The plugin's name, when the manifest gives a usable one. */
  name: string | null;
  /** The plugin, or null when it is skipped. */
  plugin: Plugin | null;
  /** One warning per dropped entry. */
  problems: LoadWarning[];
  /** The one warning of a skipped plugin, else null. */
  skip: LoadWarning | null;
  /** What only `plugins validate` reports (the loader accepts it, as ty does). */
  lint: LoadWarning[];
  /** Each kept hook's and action's script, for the lint to read its first line. */
  scripts: NamedScript[];
  /** The parsed manifest, for the strict lint; null when it could not be parsed. */
  parsed: ParsedManifest | null;
}

type Unsafe = ReturnType<typeof unsafeMode>;

/** Options of {@linkcode loadPluginDir}. */
export interface LoadDirOptions {
  /** Ends the manifest's read. */
  signal?: AbortSignal;
  observe?: Observe;
  /** StrictModes verdicts on the dirs above plugins, shared by the plugins of one load. */
  above?: Map<string, Unsafe>;
}

/** Loads the plugin in `dir` below `root`; never throws for anything a plugin contains. */
export async function loadPluginDir(
  root: string,
  dir: string | FoundDir,
  options: LoadDirOptions = {},
): Promise<PluginReport> {
  const { signal, observe, above = new Map() } = options;
  const found = typeof dir === "string" ? null : dir;
  const report = emptyReport(root, found?.path ?? dir as string);
  // StrictModes first: when nobody else can write the manifest, it cannot turn into a FIFO, or
  // grow, before it is read.
  const unsafe = found === null
    ? []
    : strictModes(report, { root, realDir: found.real, found, above });
  const knownRegular = found?.linked === false && found.manifest.isFile &&
    found.manifest.size <= MAX_MANIFEST_BYTES && unsafe.length === 0;
  const read = await readManifest(report.manifest, { signal, observe, knownRegular });
  if (!read.ok) return skip(report, { reason: read.message, at: read.at });
  report.parsed = read;
  const name = await nameOf(read);
  if (typeof name !== "string") return skip(report, name);
  report.name = name;
  let realDir = found?.real;
  if (realDir === undefined) {
    observe?.(report.dir);
    try {
      realDir = Deno.realPathSync(report.dir);
    } catch (error) {
      const reason = `cannot resolve the plugin dir: ${(error as Error).message}`;
      return skip(report, { reason, at: null });
    }
    unsafe.push(...strictModes(report, { root, realDir, above }));
  }
  const data = read.lenient as Record<string, unknown>;
  const built = await buildPlugin({ dir: report.dir, realDir, observe }, {
    data,
    typed: read.typed,
  });
  const locatedWarning = async ({ message, at, key }: Problem) =>
    warning(report, { message, at: locate(await located(read), at, { key }) });
  for (const p of built.problems) report.problems.push(await locatedWarning(p));
  report.problems.unshift(...unsafe.map((message) => warning(report, { message, at: null })));
  for (const p of built.notes) report.lint.push(await locatedWarning(p));
  report.scripts = built.scripts;
  if (!isUsable(built.parts)) {
    const drops = built.problems.flatMap((p) => p.dropped === undefined ? [] : [p.dropped]);
    return skip(report, { reason: REASONS.nothingUsable(drops), at: await nameAt(report) });
  }
  report.plugin = { name, ...built.parts };
  return report;
}

function emptyReport(root: string, dir: string): PluginReport {
  const relDir = (dir.startsWith(`${root}/`) ? dir.slice(root.length + 1) : "") ||
    relative(root, dir) || ".";
  return {
    dir,
    relDir,
    manifest: join(dir, "plugin.yaml"),
    name: null,
    plugin: null,
    problems: [],
    skip: null,
    lint: [],
    scripts: [],
    parsed: null,
  };
}

type Where = { at: Position | null };

function warning(report: PluginReport, { message, at }: Where & { message: string }): LoadWarning {
  return {
    plugin: report.name,
    path: report.manifest,
    line: at?.line ?? null,
    column: at?.column ?? null,
    message,
  };
}

function skip(report: PluginReport, { reason, at }: Where & { reason: string }): PluginReport {
  report.skip = warning(report, { message: skipped(report.name, report.relDir, reason), at });
  return report;
}

// The plugin's name, or why the manifest gives none (and where).
async function nameOf(read: ParsedManifest): Promise<string | Where & { reason: string }> {
  const at = async (path: readonly PropertyKey[]) => locate(await located(read), path);
  const data = read.lenient;
  if (data === null || data === undefined) {
    return { reason: REASONS.empty, at: { line: 1, column: 1 } };
  }
  if (!isRecord(data)) return { reason: REASONS.notAMap, at: await at([]) };
  const name = data.name;
  if (name === undefined || name === null || name === "") {
    return { reason: REASONS.noName, at: await at(["name"]) };
  }
  if (typeof name !== "string") return { reason: REASONS.nameNotText, at: await at(["name"]) };
  if (hasControl(name)) return { reason: REASONS.nameControl, at: await at(["name"]) };
  return name;
}

// StrictModes: whoever can write the manifest, the plugin dir or a dir above it (up to the
// plugins dir, where another plugin could be put in its place) decides what runs. One message
// for each part another user could change.
function strictModes(
  report: PluginReport,
  options: { root: string; realDir: string; found?: FoundDir; above: Map<string, Unsafe> },
): string[] {
  const { root, realDir, found, above } = options;
  const { dir, relDir } = report;
  const parts: string[] = [];
  const check = (what: () => string, unsafe: Unsafe) => {
    if (unsafe !== null) parts.push(`${what()} ${unsafe.reason} (hint: ${unsafe.hint})`);
  };
  check(() => `Plugin dir ${quoted(relDir)}`, verdict(realDir, found?.info));
  const info = found?.manifest.isSymlink === false ? found.manifest : null;
  const manifest = join(realDir, "plugin.yaml");
  check(() => `Manifest ${quoted(join(relDir, "plugin.yaml"))}`, verdict(manifest, info));
  for (let up = dirname(dir); up.length >= root.length && up !== dir; up = dirname(up)) {
    if (!above.has(up)) above.set(up, verdict(up));
    const what = () => `Dir ${quoted(relative(root, up) || root)} above plugin ${quoted(relDir)}`;
    check(what, above.get(up) ?? null);
    if (up === root || up === dirname(up)) break;
  }
  return parts;
}

function verdict(path: string, info?: Deno.FileInfo | null): Unsafe {
  try {
    return unsafeMode(info ?? Deno.statSync(path), path);
  } catch {
    return null; // Gone since it was resolved: nothing left to warn about.
  }
}

/** Where a loaded plugin's name is written (parsing its manifest with positions). */
export async function nameAt(report: PluginReport): Promise<Position | null> {
  return report.parsed === null ? null : locate(await located(report.parsed), ["name"]);
}
