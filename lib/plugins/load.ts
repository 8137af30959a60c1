/**
 * The plugin loader's entry point.
 *
 * @module
 */

import { observe } from "./_observe.ts";
import { join, relative, resolve } from "../_path.ts";
import type { LoadWarning, Plugin, PluginIndex } from "./types.ts";
import type { PluginReport } from "./inspect_plugin.ts";
import { createLimit } from "../_util.ts";
import { quote, REASONS, skipped } from "./messages.ts";

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

/**
 * The deepest level searched: the plugins dir's own children are depth 1.
 */
export const MAX_DEPTH = 5;

/**
 * The most directories one walk lists; past it the walk stops with a warning.
 */
export const MAX_DIRS = 10_000;

/** Options of {@linkcode discoverPluginDirs}. */
export interface DiscoverOptions {
  /** Stops the walk: it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /**
   * When the walk gives up, on the `performance.now()` clock, throwing a `TimeoutError`. The walk
   * is synchronous, so a timer's abort cannot fire during it: the clock is read instead.
   */
  deadline?: number;
}

/** What discovery found. */
export interface Discovery {
  /** Absolute plugin dirs, sorted by path. */
  dirs: string[];
  /** Folders that could not be read, and a walk cut short. */
  warnings: LoadWarning[];
}

interface Candidate {
  path: string;
  /** Its real path, or null when it is not a directory. */
  real: string | null;
  isPlugin: boolean;
}

/**
 * Finds every plugin dir under `root`. A missing `root` holds no plugins. Requires
 * `--allow-read`.
 *
 * @param root The plugins dir, absolute.
 * @param options The concurrency bound and the abort signal.
 * @returns The plugin dirs, sorted by path, and the warnings.
 */
export function discoverPluginDirs(
  root: string,
  options: DiscoverOptions = {},
): Discovery {
  const { signal, deadline } = options;
  const stopIfDue = () => {
    signal?.throwIfAborted();
    if (deadline !== undefined && performance.now() > deadline) {
      throw new DOMException("The plugins dir was not searched in time", "TimeoutError");
    }
  };
  const dirs: string[] = [];
  const warnings: LoadWarning[] = [];
  const warn = (path: string, message: string) =>
    warnings.push({ plugin: null, path, line: null, column: null, message });

  stopIfDue();
  const rootReal = realDir(root);
  const visited = new Set<string>(rootReal === null ? [] : [rootReal]);
  let listed = 0;
  let cut = false;
  let level = [root];
  for (let depth = 1; depth <= MAX_DEPTH && level.length > 0; depth++) {
    if (level.length > MAX_DIRS - listed) {
      level = level.slice(0, MAX_DIRS - listed);
      cut = true;
    }
    listed += level.length;
    // Synchronous calls: one lstat or realpath costs microseconds, an async one a trip through
    // Deno's thread pool (1,000 plugins: several times the whole walk).
    const listings = level.map((dir) => {
      stopIfDue();
      let entries: Deno.DirEntry[];
      observe(dir);
      try {
        entries = [...Deno.readDirSync(dir)];
      } catch (error) {
        if (depth === 1 && error instanceof Deno.errors.NotFound) return [];
        const what = depth === 1 ? "the plugins dir" : quote(relative(root, dir));
        warn(dir, `Cannot read ${what}: ${(error as Error).message}`);
        return [];
      }
      const names = entries.filter((e) => e.name !== ".git" && mayBeDir(e)).map((e) => e.name);
      return names.sort().map((name) => inspect(join(dir, name)));
    });
    stopIfDue();
    const next: string[] = [];
    // Claimed in path order: the first path to a real directory is the one that counts.
    for (const candidate of listings.flat().sort((a, b) => byPath(a.path, b.path))) {
      if (candidate.real === null || visited.has(candidate.real)) continue;
      visited.add(candidate.real);
      if (candidate.isPlugin) dirs.push(candidate.path);
      else if (depth < MAX_DEPTH) next.push(candidate.path);
    }
    level = next;
  }
  if (cut) warn(root, `Stopped searching the plugins dir after ${MAX_DIRS} directories`);
  dirs.sort((a, b) => byPath(relative(root, a), relative(root, b)));
  return { dirs, warnings };
}

function mayBeDir(entry: Deno.DirEntry): boolean {
  return entry.isDirectory || entry.isSymlink;
}

function inspect(path: string): Candidate {
  const real = realDir(path);
  if (real === null) return { path, real, isPlugin: false };
  return { path, real, isPlugin: exists(join(path, "plugin.yaml")) };
}

// The real path of a directory (through any symlinks), or null when `path` is not one.
function realDir(path: string): string | null {
  observe(path);
  try {
    return Deno.statSync(path).isDirectory ? Deno.realPathSync(path) : null;
  } catch {
    return null;
  }
}

function exists(path: string): boolean {
  // lstat: a plugin.yaml that is a dangling link or a folder still makes this a plugin dir, and
  // the loader then says what is wrong with it.
  observe(path);
  try {
    Deno.lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Compares strings by UTF-16 code unit.
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Compares relative paths folder by folder, so `a/z` comes before `a-b` and a collection's
 * plugins stay together.
 */
export function byPath(a: string, b: string): number {
  const left = a.split("/");
  const right = b.split("/");
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const order = byCodeUnit(left[i], right[i]);
    if (order !== 0) return order;
  }
  return left.length - right.length;
}

// From a plugins dir to reports (one per plugin dir, loaded concurrently under a bound), and
// from reports to the index: the skipped plugins and the later of two plugins sharing a name
// are left out, each with exactly one warning.

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
