/**
 * Loading a plugins dir: finding the plugin dirs, loading each (forgivingly, in
 * `inspect_plugin.ts`) and folding the reports into the index; and `plugins validate`, the
 * strict lint of the same reports.
 *
 * @module
 */

import { dirname, join, relative, resolve } from "../path.ts";
import type { LoadWarning, Plugin, PluginIndex } from "./types.ts";
import { inspectPlugin, nameAt, type PluginReport, strictProblems } from "./inspect_plugin.ts";
import { createLimit } from "../async.ts";
import { sharedName } from "./messages.ts";
import { quoted } from "../text.ts";

/** Notes that the load's result depends on `path` (present or missing), before reading it. */
export type Observe = (path: string) => void;

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

// Finds plugin dirs (ty semantics): a folder holding `plugin.yaml` is a plugin and is not
// descended into; a folder without one is a collection, searched down to 5 levels below the
// plugins dir (as ty's `maxPluginDepth` of 4 from 0 does); `.git` folders are skipped.
// The walk is bounded whatever the tree holds (SPEC "Trust boundaries"): symlinked folders are
// followed (a tyhooks extension) but each real directory is visited once, so a link back up the
// tree is a dead end rather than a loop; it lists at most {@linkcode MAX_DIRS} directories; and it
// stops when its abort signal fires. It goes level by level and claims real paths in path order,
// so which of two links to one folder counts does not depend on timing.

/** The deepest level searched: the plugins dir's own children are depth 1. */
export const MAX_DEPTH = 5;

/** The most directories one walk lists; past it the walk stops with a warning. */
export const MAX_DIRS = 10_000;

/** Options of {@linkcode discoverPluginDirs}. */
export interface DiscoverOptions {
  /** Stops the walk: it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** When the walk gives up, on the `performance.now()` clock, throwing a `TimeoutError`. */
  deadline?: number;
  observe?: Observe;
}

/** A plugin dir as discovery found it. */
export interface FoundDir {
  /** Absolute, as reached from the plugins dir. */
  path: string;
  /** Its real path. */
  real: string;
  /** Reached through a symlink below the plugins dir. */
  linked: boolean;
  /** Its `stat`. */
  info: Deno.FileInfo;
  /** The `lstat` of its `plugin.yaml`. */
  manifest: Deno.FileInfo;
}

/** What discovery found. */
export interface Discovery {
  /** The plugin dirs, sorted by path. */
  dirs: FoundDir[];
  /** Folders that could not be read, and a walk cut short. */
  warnings: LoadWarning[];
}

interface Walked {
  path: string;
  real: string;
  linked: boolean;
}

// `real` is null for what is not a directory; a plugin dir has its stats.
type Candidate = Omit<Walked, "real"> & {
  real: string | null;
  info?: Deno.FileInfo;
  manifest?: Deno.FileInfo;
};

/** Finds every plugin dir under `root`, absolute; a missing `root` holds no plugins. */
export function discoverPluginDirs(root: string, options: DiscoverOptions = {}): Discovery {
  const { signal, deadline, observe } = options;
  const stopIfDue = () => {
    signal?.throwIfAborted();
    if (deadline !== undefined && performance.now() > deadline) {
      throw new DOMException("The plugins dir was not searched in time", "TimeoutError");
    }
  };
  const dirs: FoundDir[] = [];
  const warnings: LoadWarning[] = [];
  const warn = (path: string, message: string) =>
    warnings.push({ plugin: null, path, line: null, column: null, message });
  // Synchronous calls: one lstat or realpath costs microseconds, an async one a trip through
  // Deno's thread pool (1,000 plugins: several times the whole walk). A folder that is no link
  // is its parent's real path and its name: only links are resolved.
  const inspect = (parent: Walked, entry: Deno.DirEntry): Candidate => {
    const path = join(parent.path, entry.name);
    const linked = parent.linked || entry.isSymlink;
    observe?.(path);
    let real = join(parent.real, entry.name);
    // A folder that cannot be looked into may hold a plugin (a guard, say): it is named, never
    // passed over in silence. One gone since it was listed holds nothing.
    const unreadable = (error: unknown): Candidate => {
      if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
        warn(path, `Cannot read ${quoted(relative(root, path))}: ${(error as Error).message}`);
      }
      return { path, real: null, linked };
    };
    try {
      if (entry.isSymlink) {
        if (!Deno.statSync(path).isDirectory) return { path, real: null, linked };
        real = Deno.realPathSync(path);
      }
    } catch (error) {
      // A link that leads nowhere (an unmounted disk, a plugin not cloned yet) was meant to hold
      // something: named too.
      const nowhere = leadsNowhere(path, error);
      if (nowhere !== null) warn(path, `Cannot read ${quoted(relative(root, path))}: ${nowhere}`);
      return nowhere === null ? unreadable(error) : { path, real: null, linked };
    }
    const manifest = join(path, "plugin.yaml");
    // lstat: a plugin.yaml that is a dangling link or a folder still makes this a plugin dir,
    // and the loader then says what is wrong with it.
    observe?.(manifest);
    let manifestInfo: Deno.FileInfo;
    try {
      manifestInfo = Deno.lstatSync(manifest);
    } catch (error) {
      // None: a collection, listed next (a folder that cannot be listed is named then).
      if (error instanceof Deno.errors.NotFound) return { path, real, linked };
      return unreadable(error);
    }
    try {
      return { path, real, linked, manifest: manifestInfo, info: Deno.statSync(path) };
    } catch (error) {
      return unreadable(error);
    }
  };

  stopIfDue();
  observe?.(root);
  let rootReal: string | null = null;
  try {
    if (Deno.statSync(root).isDirectory) rootReal = Deno.realPathSync(root);
  } catch (error) {
    // A missing plugins dir holds no plugins, but one that is a link leading nowhere is not
    // missing; an unreadable one is reported when listed.
    const nowhere = leadsNowhere(root, error);
    if (nowhere !== null) {
      warn(root, `Cannot read the plugins dir: ${nowhere}`);
      return { dirs, warnings };
    }
  }
  const visited = new Set<string>(rootReal === null ? [] : [rootReal]);
  let listed = 0;
  let cut = false;
  let level: Walked[] = [{ path: root, real: rootReal ?? root, linked: false }];
  for (let depth = 1; depth <= MAX_DEPTH && level.length > 0; depth++) {
    if (level.length > MAX_DIRS - listed) {
      level = level.slice(0, MAX_DIRS - listed);
      cut = true;
    }
    listed += level.length;
    const listings = level.map((dir) => {
      stopIfDue();
      let entries: Deno.DirEntry[];
      observe?.(dir.path);
      try {
        entries = [...Deno.readDirSync(dir.path)];
      } catch (error) {
        if (depth === 1 && error instanceof Deno.errors.NotFound) return [];
        const what = depth === 1 ? "the plugins dir" : quoted(relative(root, dir.path));
        warn(dir.path, `Cannot read ${what}: ${(error as Error).message}`);
        return [];
      }
      return entries.filter((e) => e.name !== ".git" && (e.isDirectory || e.isSymlink))
        .sort((a, b) => byBytes(a.name, b.name)).map((entry) => inspect(dir, entry));
    });
    stopIfDue();
    const next: Walked[] = [];
    // Claimed in path order: the first path to a real directory is the one that counts.
    for (const candidate of listings.flat().sort((a, b) => byPath(a.path, b.path))) {
      const { path, real, linked, info, manifest } = candidate;
      if (real === null || visited.has(real)) continue;
      visited.add(real);
      if (manifest !== undefined) dirs.push({ path, real, linked, info: info!, manifest });
      else if (depth < MAX_DEPTH) next.push({ path, real, linked });
    }
    level = next;
  }
  if (cut) warn(root, `Stopped searching the plugins dir after ${MAX_DIRS} directories`);
  const start = root.endsWith("/") ? root.length : root.length + 1;
  dirs.sort((a, b) => byPath(a.path.slice(start), b.path.slice(start)));
  return { dirs, warnings };
}

// Why `path`, whose stat failed with `error`, is a symlink that leads nowhere; null when it is
// no symlink (or is gone), or the failure is another one.
function leadsNowhere(path: string, error: unknown): string | null {
  const loop = error instanceof Deno.errors.FilesystemLoop;
  if (
    !(loop || error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)
  ) {
    return null;
  }
  let target: string;
  try {
    target = Deno.readLinkSync(path);
  } catch {
    return null;
  }
  return `it is a link to ${quoted(target)}, which ${
    loop ? "is a loop of links" : "leads nowhere"
  }`;
}

/**
 * Compares strings as Go does (`a < b`): by their UTF-8 bytes, which is code point order. JS's
 * `<` compares UTF-16 code units, which differs where a character above U+FFFF (a surrogate pair)
 * meets one from U+E000 to U+FFFF.
 */
export function byBytes(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/**
 * Compares relative paths folder by folder, so `a/z` comes before `a-b` and a collection's
 * plugins stay together: as {@linkcode byBytes}, with `/` below every other character.
 */
export function byPath(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return (x === SLASH ? -1 : rank(x)) - (y === SLASH ? -1 : rank(y));
  }
  return a.length - b.length;
}

const SLASH = 0x2f;

// A code unit's place in code point order: surrogates (halves of characters above U+FFFF) after
// every other code unit, in their own order.
function rank(unit: number): number {
  return unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2800 : unit;
}

// From a plugins dir to reports (one per plugin dir, loaded concurrently under a bound), and
// from reports to the index: a skipped plugin is left out with exactly one warning. Two plugins
// sharing a name both load, as in ty; only `plugins validate` reports it.

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
        return inspectPlugin(root, d, { signal, observe, above });
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

// `plugins validate`: every load warning (including the dropped entries of plugins that are left
// out), unknown keys and type errors, a name used twice, each with file, line and column.

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
 * import { validatePlugins } from "./load.ts";
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
  return await lint({ root, reports: [await inspectPlugin(root, full)], warnings: [] });
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
