/**
 * The warm path's cache of the plugin index, so a spawn-time call whose plugins have not changed
 * loads neither yaml nor zod (lib/README.md, "Startup and the index cache"). An optimisation, never
 * an authority: used only from a private dir and file whose checksum matches, when every recorded
 * signature (taken *before* the loader read the path) still matches and the index is one a cold
 * load could have built from those paths. The one blind spot is a change within the same
 * millisecond that keeps size, inode and mode, which no stat-based cache can see.
 *
 * @module
 */

import type { PluginIndex } from "./types.ts";
import type { LoadOptions } from "./load.ts";
import { dirname, join, normalize, resolve, sep } from "../paths.ts";
import { checkPrivateDir, checkPrivateFile, readBoundedBytes, writeAtomic } from "../fs.ts";
import { quoted } from "../text.ts";
import { isRecord } from "../wire/json.ts";

/** Bumped when the index, what a load or a valid index holds, or the cache layout changes. */
const FORMAT = 7;
/** A cache file larger than this is not read: an index of 10,000 plugins is a few MiB. */
const MAX_CACHE_BYTES = 64 * 1024 * 1024;
/**
 * Paths changed this recently when the load began are "racy" (git's word): a second change within
 * the same file-system timestamp tick (coarse clocks tick every few ms) would keep every field of
 * the signature, so an index built from them is not cached until they have settled.
 */
const RACY_MS = 20;
/**
 * Deno gives ctime in whole seconds (mtime in milliseconds), so a ctime stands for any instant of
 * its second: a path whose ctime falls in the second the load began is racy, whatever its mtime
 * says (`cp -p` and `rsync -t --inplace` put an old mtime back; only the ctime tells).
 */
const CTIME_TICK_MS = 1000;

interface CacheBody {
  format: number;
  dir: string;
  /** Every plugin dir found, skipped ones included. */
  pluginDirs: string[];
  /** Every path the load looked at -> where its signature starts in `stamps`. */
  deps: Record<string, number>;
  /**
   * The signatures, one after another: one flat list of numbers parses several times faster
   * than a list per path.
   */
  stamps: number[];
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
  /** On a miss, why the cache was not used (for a debug log). */
  reason?: string;
}

/**
 * Loads the plugin index from the cache when it can be trusted and nothing it depends on
 * changed, else loads it and rewrites the cache. A cache that cannot be trusted, read, parsed or
 * written is ignored: the result is always what `loadPlugins` would return. Requires
 * `--allow-read`, `--allow-sys` (the user id), and `--allow-write` for the cache dir.
 */
export async function loadPluginsCached(
  dir: string,
  options: CachedLoadOptions,
): Promise<CachedLoad> {
  const root = resolve(dir);
  const cacheDir = resolve(options.cacheDir);
  const file = join(cacheDir, `index-${hash(root)}.json`);
  const dirState = checkPrivateDir(cacheDir, "the cache dir");
  let reason: string;
  if (dirState.ok) {
    const cached = await readCache(file, root);
    if (cached.index !== null) return { index: cached.index, hit: true };
    reason = cached.reason;
  } else {
    reason = dirState.reason;
  }
  const started = Date.now();
  // Each path the load looks at, with its signature from before it was read: a change made while
  // the load runs then invalidates the entry it writes instead of hiding behind the new state.
  const paths = new Map<string, Signature>();
  const observe = (path: string) => {
    if (!paths.has(path)) paths.set(path, signature(path));
  };
  const { collectReports, foldReports } = await import("./load.ts");
  const collected = await collectReports(root, { ...options, observe });
  const folded = foldReports(collected);
  const index: PluginIndex = { dir: collected.root, ...folded };
  if (newestStamp(paths.values()) >= started - RACY_MS) {
    return {
      index,
      hit: false,
      reason: `${reason}; and the plugins changed too recently to cache`,
    };
  }
  if (dirState.ok || dirState.missing) {
    const deps: Record<string, number> = {};
    const stamps: number[] = [];
    for (const [path, sig] of recorded(paths)) {
      deps[path] = stamps.length;
      stamps.push(...sig);
    }
    const pluginDirs = collected.reports.map((r) => r.dir);
    const body: CacheBody = { format: FORMAT, dir: root, pluginDirs, deps, stamps, index };
    await writeCache(file, body);
  }
  return { index, hit: false, reason };
}

type Read = { index: PluginIndex; reason?: undefined } | { index: null; reason: string };

async function readCache(file: string, root: string): Promise<Read> {
  const miss = (reason: string): Read => ({ index: null, reason });
  const unsafe = checkPrivateFile(file, MAX_CACHE_BYTES, "the cache file");
  if (unsafe !== null) return miss(unsafe);
  let bytes: Uint8Array;
  try {
    // checkCacheFile saw a regular file in a dir only the user can write.
    bytes = await readBoundedBytes(file, { maxBytes: MAX_CACHE_BYTES, knownRegular: true });
  } catch (error) {
    return miss(`the cache file cannot be read: ${(error as Error).message}`);
  }
  const newline = bytes.indexOf(0x0a);
  const body = bytes.subarray(newline + 1);
  const sum = new TextDecoder().decode(bytes.subarray(0, Math.max(0, newline)));
  if (newline < 0 || sum !== await checksum(body)) {
    return miss("the cache file is damaged (its checksum does not match)");
  }
  let data: CacheBody;
  try {
    data = JSON.parse(new TextDecoder().decode(body));
  } catch {
    return miss("the cache file is not JSON");
  }
  if (data?.format !== FORMAT || data.dir !== root) {
    return miss("the cache file is for another dir");
  }
  if (
    !isRecord(data.deps) || !Array.isArray(data.stamps) ||
    !Array.isArray(data.pluginDirs) || !Array.isArray(data.index?.plugins) ||
    !Array.isArray(data.index?.warnings)
  ) {
    return miss("the cache file has the wrong shape");
  }
  const changed = changedDep(data);
  if (changed !== null) return miss(`${quoted(changed)} changed`);
  const inconsistent = checkConsistency(data);
  return inconsistent === null ? { index: data.index } : miss(inconsistent);
}

/**
 * The paths worth recording: not a missing path whose parent is recorded present, as adding it
 * would change the parent's mtime; each would cost a warm call a failed lstat and its exception.
 */
function recorded(paths: Map<string, Signature>): [string, Signature][] {
  return [...paths].filter(([path, sig]) => {
    const parent = paths.get(dirname(path));
    return !isMissing(sig, 0) || parent === undefined || isMissing(parent, 0);
  });
}

/**
 * The first recorded path whose signature changed, or null. Present paths go first, so a missing
 * one whose parent is recorded and unchanged is known still missing without a lookup.
 */
function changedDep({ deps, stamps }: CacheBody): string | null {
  const missing: string[] = [];
  for (const path in deps) {
    const at = deps[path];
    if (!Number.isInteger(at) || at < 0 || at + STAMP > stamps.length) return path;
    if (isMissing(stamps, at)) missing.push(path);
    else if (!unchanged(path, stamps, at)) return path;
  }
  const stillMissing = new Set<string>();
  const isStillMissing = (path: string): boolean => {
    if (stillMissing.has(path)) return true;
    const parent = dirname(path);
    const known = parent !== path && deps[parent] !== undefined &&
      (!isMissing(stamps, deps[parent]) || isStillMissing(parent));
    if (!known && !isMissing(signature(path), 0)) return false;
    stillMissing.add(path);
    return true;
  };
  return missing.find((path) => !isStillMissing(path)) ?? null;
}

// The index must be one a cold load could have built from the recorded paths: everything a
// cold load looks at to decide what runs is among them (so its signature was just checked).
function checkConsistency(data: CacheBody): string | null {
  const { deps, stamps, dir: root } = data;
  const known = (path: unknown) => typeof path === "string" && deps[path] !== undefined;
  if (!known(root)) return "the plugins dir is not recorded";
  const pluginDirs = new Set(data.pluginDirs);
  for (const plugin of data.index.plugins) {
    if (!pluginDirs.has(plugin.dir)) {
      return `the plugin dir ${quoted(String(plugin.dir))} is not listed`;
    }
  }
  for (const dir of pluginDirs) {
    if (
      typeof dir !== "string" || !dir.startsWith(root + sep) || normalize(dir) !== dir ||
      dir.endsWith(sep)
    ) return `the plugin dir ${quoted(String(dir))} is not under the plugins dir`;
    const manifest = deps[`${dir}/plugin.yaml`];
    if (manifest === undefined || isMissing(stamps, manifest)) {
      return `the manifest in ${quoted(dir)} is not recorded`;
    }
    // Every collection between the plugins dir and the plugin was walked, so its signature
    // says whether a plugin was added or removed there.
    for (let up = dirname(dir); up !== root && up.startsWith(root + sep); up = dirname(up)) {
      if (!known(up)) return `the collection dir ${quoted(up)} is not recorded`;
    }
  }
  const checkScript = (script: unknown): string | null => {
    if (!known(script)) return `the script ${quoted(String(script))} is not recorded`;
    // Its signature was just checked, and holds the mode of what it leads to.
    const mode = modeOf(stamps, deps[script as string]);
    if (mode === null) return `the script ${quoted(script as string)} cannot be read`;
    if ((mode & 0o170000) !== 0o100000 || (mode & 0o111) === 0) {
      return `the script ${quoted(script as string)} is not an executable regular file`;
    }
    return null;
  };
  for (const plugin of data.index.plugins) {
    for (const event in plugin.hooks) {
      const wrong = checkScript(plugin.hooks[event]);
      if (wrong !== null) return wrong;
    }
    for (const action of plugin.actions ?? []) {
      const wrong = checkScript(action.command);
      if (wrong !== null) return wrong;
    }
  }
  return null;
}

async function writeCache(file: string, body: CacheBody): Promise<void> {
  const cacheDir = dirname(file);
  try {
    Deno.mkdirSync(cacheDir, { recursive: true, mode: 0o700 });
    if (!checkPrivateDir(cacheDir, "the cache dir").ok) return;
    const text = JSON.stringify(body);
    const sum = await checksum(new TextEncoder().encode(text));
    await writeAtomic(file, `${sum}\n${text}`, { mode: 0o600 });
  } catch {
    // A read-only cache dir only costs the warm path.
  }
}

// SHA-256 of the body, in hex (WebCrypto's digest is native: a JS loop runs slower under --no-opt).
async function checksum(body: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", body as Uint8Array<ArrayBuffer>);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/**
 * mtime, ctime, inode, size and mode of the entry (-1 each when absent or not given) and, for a
 * symlink, the same five of its target.
 */
type Signature = number[];

const STAMP = 5;
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

function signature(path: string): Signature {
  const sig = stamp(path, Deno.lstatSync);
  return (sig[4] & S_IFMT) === S_IFLNK ? [...sig, ...stamp(path, Deno.statSync)] : sig;
}

function stamp(path: string, stat: (path: string) => Deno.FileInfo): Signature {
  try {
    const info = stat(path);
    return [
      info.mtime?.getTime() ?? -1,
      info.ctime?.getTime() ?? -1,
      info.ino ?? -1,
      info.size,
      info.mode ?? -1,
    ];
  } catch {
    return [-1, -1, -1, -1, -1];
  }
}

function isMissing(stamps: number[], at: number): boolean {
  return stamps[at + 4] === -1;
}

// Is `path` as the signature at `at` says? The same as comparing with a new signature, without
// building one: a warm call asks this of every recorded path.
function unchanged(path: string, stamps: number[], at: number): boolean {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return false;
  }
  if (!sameStamp(info, stamps, at)) return false;
  if (!info.isSymlink) return true;
  try {
    return sameStamp(Deno.statSync(path), stamps, at + STAMP);
  } catch {
    return isMissing(stamps, at + STAMP);
  }
}

function sameStamp(info: Deno.FileInfo, stamps: number[], at: number): boolean {
  return stamps[at + 4] === (info.mode ?? -1) &&
    stamps[at + 1] === (info.ctime?.getTime() ?? -1) &&
    stamps[at] === (info.mtime?.getTime() ?? -1) && stamps[at + 2] === (info.ino ?? -1) &&
    stamps[at + 3] === info.size;
}

// The mode (file type and permission bits) of what a signature describes: the entry itself, or
// a symlink's target; null for a missing path or a dangling link.
function modeOf(stamps: number[], at: number): number | null {
  let mode = stamps[at + 4];
  if ((mode & S_IFMT) === S_IFLNK) mode = stamps[at + STAMP + 4];
  return typeof mode === "number" && mode !== -1 ? mode : null;
}

// The latest instant an mtime or a ctime of the signatures may stand for.
function newestStamp(signatures: Iterable<Signature>): number {
  let newest = -Infinity;
  for (const sig of signatures) {
    for (let at = 0; at < sig.length; at += STAMP) {
      const ctime = sig[at + 1];
      newest = Math.max(newest, sig[at], ctime < 0 ? ctime : ctime + CTIME_TICK_MS - 1);
    }
  }
  return newest;
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
