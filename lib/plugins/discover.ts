/**
 * Finds plugin dirs (ty semantics): a folder holding `plugin.yaml` is a plugin and is not
 * descended into; a folder without one is a collection, searched down to depth 4; folders whose
 * name starts with `.` are skipped.
 *
 * @module
 */

import { join, relative } from "node:path";
import type { LoadWarning } from "./types.ts";
import { createLimit, type Limit } from "./_limit.ts";
import { quote } from "./messages.ts";
import { byPath } from "./_sort.ts";
import { observe } from "./_observe.ts";

/**
 * The deepest level searched: the plugins dir's own children are depth 1.
 *
 * @example
 * ```ts
 * import { MAX_DEPTH } from "./discover.ts";
 * console.assert(MAX_DEPTH === 4);
 * ```
 */
export const MAX_DEPTH = 4;

/** Options of {@linkcode discoverPluginDirs}. */
export interface DiscoverOptions {
  /** Bounds the file-system calls in flight; default 64 at once. */
  limit?: Limit;
}

/** What discovery found. */
export interface Discovery {
  /** Absolute plugin dirs, sorted by path. */
  dirs: string[];
  /** Folders that could not be read. */
  warnings: LoadWarning[];
}

/**
 * Finds every plugin dir under `root`. A missing `root` holds no plugins. Symlinks to folders
 * are followed (depth bounds any loop). Requires `--allow-read`.
 *
 * @param root The plugins dir, absolute.
 * @param options The concurrency bound.
 * @returns The plugin dirs, sorted by path, and the warnings.
 * @example
 * ```ts
 * import { discoverPluginDirs } from "./discover.ts";
 * const found = await discoverPluginDirs("/nonexistent");
 * console.assert(found.dirs.length === 0 && found.warnings.length === 0);
 * ```
 */
export async function discoverPluginDirs(
  root: string,
  options: DiscoverOptions = {},
): Promise<Discovery> {
  const limit = options.limit ?? createLimit(64);
  const dirs: string[] = [];
  const warnings: LoadWarning[] = [];

  async function search(dir: string, depth: number): Promise<void> {
    let entries: Deno.DirEntry[];
    observe(dir);
    try {
      entries = await limit(() => Array.fromAsync(Deno.readDir(dir)));
    } catch (error) {
      if (depth === 1 && error instanceof Deno.errors.NotFound) return;
      const what = depth === 1 ? "the plugins dir" : quote(relative(root, dir));
      const message = `Cannot read ${what}: ${(error as Error).message}`;
      warnings.push({ plugin: null, path: dir, line: null, column: null, message });
      return;
    }
    await Promise.all(entries.map(async (entry) => {
      if (entry.name.startsWith(".")) return;
      const child = join(dir, entry.name);
      if (!entry.isDirectory && !(entry.isSymlink && await isDirectory(child, limit))) return;
      if (await exists(join(child, "plugin.yaml"), limit)) dirs.push(child);
      else if (depth < MAX_DEPTH) await search(child, depth + 1);
    }));
  }

  await search(root, 1);
  dirs.sort((a, b) => byPath(relative(root, a), relative(root, b)));
  return { dirs, warnings };
}

async function isDirectory(path: string, limit: Limit): Promise<boolean> {
  observe(path);
  const info = await limit(() => Deno.stat(path)).catch(() => null);
  return info?.isDirectory ?? false;
}

async function exists(path: string, limit: Limit): Promise<boolean> {
  // lstat: a plugin.yaml that is a dangling link or a folder still makes this a plugin dir, and
  // the loader then says what is wrong with it.
  observe(path);
  return await limit(() => Deno.lstat(path)).then(() => true, () => false);
}
