/**
 * The warm path: a cache of the loaded plugin index, so that a spawn-time call (`route`,
 * `place`, `tool pre`) whose plugins have not changed loads neither yaml nor zod.
 *
 * The cache records every path the loader looked at (directories it listed, manifests, scripts,
 * convention folders, and paths it found missing) with a signature of each: mtime, ctime, inode,
 * size and mode. It is used only when every signature still matches, so adding, removing,
 * editing, chmod-ing or re-linking anything the index depends on reloads it (editing a script
 * reloads too, needlessly but cheaply). The one blind spot is a change within the same
 * millisecond that keeps size, inode and mode, which no stat-based cache can see.
 *
 * @module
 */

import { join, resolve } from "node:path";
import type { PluginIndex } from "./types.ts";
import { type LoadOptions, loadPlugins } from "./load.ts";
import { observing } from "./_observe.ts";

/** Bumped whenever the index or the cache layout changes shape. */
const FORMAT = 1;

interface CacheFile {
  format: number;
  dir: string;
  /** path -> signature ("" when the path did not exist). */
  deps: Record<string, string>;
  index: PluginIndex;
}

/** Options of {@linkcode loadPluginsCached}. */
export interface CachedLoadOptions extends LoadOptions {
  /** Where cache files live, e.g. `<cache>/tyhooks`. */
  cacheDir: string;
}

/** What a cached load did. */
export interface CachedLoad {
  index: PluginIndex;
  /** True when the index came from the cache. */
  hit: boolean;
}

/**
 * Loads the plugin index from the cache when nothing it depends on changed, else loads it and
 * rewrites the cache. A cache that cannot be read, parsed or written is ignored: the result is
 * always what `loadPlugins` would return. Requires `--allow-read`, and `--allow-write` for the
 * cache dir.
 *
 * @param dir The plugins dir.
 * @param options The cache dir and the loader's options.
 * @returns The index and whether it was a cache hit.
 * @example
 * ```ts
 * import { loadPluginsCached } from "./cache.ts";
 * const cacheDir = await Deno.makeTempDir();
 * const first = await loadPluginsCached("/nonexistent", { cacheDir });
 * const second = await loadPluginsCached("/nonexistent", { cacheDir });
 * console.assert(!first.hit && second.hit);
 * ```
 */
export async function loadPluginsCached(
  dir: string,
  options: CachedLoadOptions,
): Promise<CachedLoad> {
  const root = resolve(dir);
  const file = join(options.cacheDir, `index-${hash(root)}.json`);
  const cached = readCache(file, root);
  if (cached !== null) return { index: cached, hit: true };
  const { result: index, paths } = await observing(() => loadPlugins(root, options));
  const deps: Record<string, string> = {};
  for (const path of paths) deps[path] = signature(path);
  writeCache(file, { format: FORMAT, dir: root, deps, index });
  return { index, hit: false };
}

function readCache(file: string, root: string): PluginIndex | null {
  let data: CacheFile;
  try {
    data = JSON.parse(Deno.readTextFileSync(file));
  } catch {
    return null;
  }
  // Never trusted blindly: the shape, the dir, then every dependency.
  if (data?.format !== FORMAT || data.dir !== root || typeof data.deps !== "object") return null;
  if (!Array.isArray(data.index?.plugins) || !Array.isArray(data.index?.warnings)) return null;
  for (const [path, sig] of Object.entries(data.deps)) {
    if (signature(path) !== sig) return null;
  }
  return data.index;
}

function writeCache(file: string, data: CacheFile): void {
  const temp = `${file}.${Deno.pid}.tmp`;
  try {
    Deno.mkdirSync(join(file, ".."), { recursive: true });
    Deno.writeTextFileSync(temp, JSON.stringify(data));
    // Rename is atomic: a concurrent reader sees the old file or the new one, never half.
    Deno.renameSync(temp, file);
  } catch {
    // A read-only cache dir only costs the warm path.
    try {
      Deno.removeSync(temp);
    } catch {
      // Nothing was written.
    }
  }
}

function signature(path: string): string {
  try {
    const link = Deno.lstatSync(path);
    const sig = stamp(link);
    return link.isSymlink ? `${sig}>${stamp(Deno.statSync(path))}` : sig;
  } catch {
    return "";
  }
}

function stamp(info: Deno.FileInfo): string {
  return `${info.mtime?.getTime()}:${info.ctime?.getTime()}:${info.ino}:${info.size}:${info.mode}`;
}

// FNV-1a: a stable short name for the cache file of a plugins dir (the file also stores the dir).
function hash(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0).toString(16).padStart(8, "0");
}
