/**
 * What is installed, as `update` and `remove` see it: which install a name means (a plugin name,
 * a plugin folder, or an install folder, as in ty), where an install came from (ty's
 * `.sources.json`), and whether a path is reached through a symlink (then nothing is written or
 * deleted through it).
 *
 * @module
 */

import type { PluginIndex } from "../types.ts";
import { isInside } from "../script_path.ts";
import { basename, dirname, join, relative, sep } from "../../paths.ts";
import { readBounded, writeAtomic } from "../../fs.ts";
import { quoted } from "../../text.ts";
import { isRecord } from "../../wire/json.ts";
import { sleep } from "../../async.ts";
import { RunError } from "../../errors.ts";

/**
 * The folder NAME (given to `update` or `remove`) means, absolute, below the plugins dir (not
 * resolved through symlinks), or null: a plugin's name first, then a folder directly in the
 * plugins dir (an install folder, a collection), then a plugin folder's base name (ty's fallback).
 */
export async function findNamed(index: PluginIndex, name: string): Promise<string | null> {
  const byName = index.plugins.find((p) => p.name === name);
  if (byName) return byName.dir;
  if (name !== "" && !name.startsWith(".") && !name.includes("/") && name !== "..") {
    const folder = join(index.dir, name);
    const info = await Deno.lstat(folder).catch(() => null);
    if (info !== null && (info.isDirectory || info.isSymlink)) return folder;
  }
  return index.plugins.find((p) => p.dir.split(sep).at(-1) === name)?.dir ?? null;
}

/** The install folder holding `dir`: its first path component below the plugins dir. */
export function installFolderOf(root: string, dir: string): string {
  return relative(root, dir).split(sep)[0];
}

/** The first symlink on the way from `root` (excluded) to `path` (included), and its target. */
export async function firstSymlink(
  root: string,
  path: string,
): Promise<{ path: string; target: string } | null> {
  if (!isInside(root, path) || path === root) {
    throw new RunError(`Refusing to touch ${quoted(path)}: not inside the plugins dir`);
  }
  let at = root;
  for (const part of relative(root, path).split(sep)) {
    at = join(at, part);
    const info = await Deno.lstat(at);
    if (info.isSymlink) {
      return { path: at, target: await Deno.realPath(at).catch(() => Deno.readLink(at)) };
    }
  }
  return null;
}

// ty's provenance file, `<plugins-dir>/.sources.json`: install folder name -> where it came from.
// tyhooks reads and writes it in ty's shape so both tools sharing a plugins dir agree. `ref` is a
// tyhooks addition (ty reads past it; a later write by ty drops it).

const SOURCES_FILE = ".sources.json";

/** One install folder's provenance, as ty writes it. */
export interface InstalledSource {
  /** ty's catalog id, when ty installed it by id; kept as found. */
  id?: string;
  /** The git URL or local path it came from. */
  source: string;
  /** The folder inside `source` that was copied out (ty's catalog installs); kept as found. */
  subdir?: string;
  /** RFC 3339 time of the last install or update. */
  installed_at?: string;
  /** The branch, tag or commit given with `--ref` (tyhooks). */
  ref?: string;
}

/** Where a record's files come from, for messages: the source, and its subdir when it has one. */
export function describe(record: InstalledSource): string {
  return record.subdir ? `${record.source}/${record.subdir}` : record.source;
}

/**
 * The records by install folder. A missing, unreadable or malformed file is an empty map, as in
 * ty: provenance is a convenience, never a precondition.
 */
export async function loadSources(pluginsDir: string): Promise<Record<string, InstalledSource>> {
  const path = join(pluginsDir, SOURCES_FILE);
  try {
    // A FIFO planted there must not hang the call: regular files only.
    if (!(await Deno.lstat(path)).isFile) return {};
    const data = JSON.parse(await readBounded(path, { maxBytes: 1 << 20 }));
    if (!isRecord(data)) return {};
    const records = Object.entries(data).filter(([, v]) => isSourceRecord(v));
    return Object.fromEntries(records) as Record<string, InstalledSource>;
  } catch {
    return {};
  }
}

/**
 * The records, for a change to them: a missing file is none; one that cannot be read whole as a
 * JSON object (malformed, too large, a link, not a file) is a `RunError`, so no rewrite drops the
 * records it could not read.
 */
export async function sourcesToChange(
  pluginsDir: string,
): Promise<Record<string, InstalledSource>> {
  const path = join(pluginsDir, SOURCES_FILE);
  const info = await Deno.lstat(path).catch((error) => {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  });
  if (info === null) return {};
  const cannot = (why: string) =>
    new RunError(`Cannot record the install in ${quoted(path)}: it ${why}`, {
      hint: `hint: fix it, or move it aside (mv ${quoted(path)} ${quoted(`${path}.bad`)})`,
    });
  if (info.isSymlink) throw cannot("is a symbolic link, which tyhooks does not write through");
  if (!info.isFile) throw cannot("is not a regular file");
  let data: unknown;
  try {
    data = JSON.parse(await readBounded(path, { maxBytes: 1 << 20, knownRegular: true }));
  } catch (error) {
    throw cannot(`cannot be read: ${(error as Error).message}`);
  }
  if (!isRecord(data)) throw cannot("holds no JSON object");
  return data as Record<string, InstalledSource>;
}

/** How often a command waiting for the install lock asks again. */
const LOCK_POLL_MS = 100;

/**
 * Runs `fn` holding the plugins dir's install lock (an flock on the dir itself): the adds, updates
 * and removes of one plugins dir take turns, so none checks a folder or rewrites `.sources.json`
 * while another changes them. `onWait` hears when another holds it; `signal` ends the wait (a
 * command interrupted while it waits changes nothing). Where the file system has no flock for a
 * dir (NFS emulates it with write locks, which a dir cannot take), `fn` runs without it.
 */
export async function withInstallLock<T>(
  pluginsDir: string,
  fn: () => Promise<T>,
  options: { onWait?: () => void; signal?: AbortSignal } = {},
): Promise<T> {
  let dir: Deno.FsFile;
  try {
    dir = await Deno.open(pluginsDir, { read: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return await fn(); // Nothing installed to guard.
    throw error;
  }
  try {
    let locked: boolean;
    try {
      locked = await dir.tryLock(true);
    } catch {
      return await fn(); // No flock here: as before there was one.
    }
    if (!locked) options.onWait?.();
    while (!locked) {
      options.signal?.throwIfAborted();
      await sleep(LOCK_POLL_MS, options.signal);
      locked = await dir.tryLock(true);
    }
    options.signal?.throwIfAborted();
    return await fn();
  } finally {
    dir.close();
  }
}

/**
 * Sets (or, with `null`, drops) the record of `dir`, an install folder directly in the plugins
 * dir, rewriting the file as ty does: sorted keys, two-space indent, a final newline, written to
 * a temp file and renamed. Call it holding the install lock ({@linkcode withInstallLock}).
 */
export async function saveSource(dir: string, record: InstalledSource | null): Promise<void> {
  const pluginsDir = dirname(dir);
  const folder = basename(dir);
  const all = await sourcesToChange(pluginsDir);
  if (record === null) {
    if (!(folder in all)) return;
    delete all[folder];
  } else {
    all[folder] = record;
  }
  // Go's encoding/json writes map keys sorted, and struct fields in declaration order.
  // A record of a shape tyhooks does not know is kept as found.
  const sorted = Object.fromEntries(
    Object.keys(all).sort().map((k) => [k, isSourceRecord(all[k]) ? ordered(all[k]) : all[k]]),
  );
  const text = JSON.stringify(sorted, null, 2) + "\n";
  await writeAtomic(join(pluginsDir, SOURCES_FILE), text, { mode: 0o644 });
}

function isSourceRecord(value: unknown): value is InstalledSource {
  return isRecord(value) && typeof value.source === "string";
}

function ordered(r: InstalledSource): InstalledSource {
  return {
    ...(r.id ? { id: r.id } : {}),
    source: r.source,
    ...(r.subdir ? { subdir: r.subdir } : {}),
    ...(r.installed_at ? { installed_at: r.installed_at } : {}),
    ...(r.ref ? { ref: r.ref } : {}),
  };
}
