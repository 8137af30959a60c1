/**
 * Installed folders as `plugins update` and `remove` see them: which install a name means (a
 * plugin name, a plugin folder, or an install folder, as in ty), where a checkout came from, and
 * whether a path is reached through a symlink (then nothing is written or deleted through it);
 * and `plugins remove` itself.
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { readBounded } from "../read_bounded.ts";
import type { Plugin, PluginIndex } from "./types.ts";
import { isInside } from "./script_path.ts";
import { dirname, join, relative, sep } from "../_path.ts";
import { loadPlugins } from "./load.ts";

/** What a NAME given to `update` or `remove` resolved to. */
export interface NamedTarget {
  /** The folder meant, absolute, below the plugins dir (not resolved through symlinks). */
  dir: string;
  /** The plugin it names, when it names one. */
  plugin: Plugin | null;
}

/**
 * Finds what NAME means: a plugin's name first, then a folder directly in the plugins dir (an
 * install folder, a collection), then a plugin folder's base name (ty's fallback).
 *
 * @returns The target, or null when nothing has that name.
 */
export async function findNamed(index: PluginIndex, name: string): Promise<NamedTarget | null> {
  const byName = index.plugins.find((p) => p.name === name);
  if (byName) return { dir: byName.dir, plugin: byName };
  if (name !== "" && !name.startsWith(".") && !name.includes("/") && name !== "..") {
    const folder = join(index.dir, name);
    const info = await Deno.lstat(folder).catch(() => null);
    if (info !== null && (info.isDirectory || info.isSymlink)) {
      return { dir: folder, plugin: index.plugins.find((p) => p.dir === folder) ?? null };
    }
  }
  const byFolder = index.plugins.find((p) => p.dir.split(sep).at(-1) === name);
  return byFolder ? { dir: byFolder.dir, plugin: byFolder } : null;
}

/**
 * The install folder holding `dir`: its first path component below the plugins dir (what
 * `plugins add` creates).
 */
export function installFolderOf(root: string, dir: string): string {
  return relative(root, dir).split(sep)[0];
}

/**
 * The first symlink on the way from `root` (excluded) to `path` (included), or null. Requires
 * `--allow-read`.
 *
 * @param path A path below it.
 * @returns The symlink's path and its target, or null.
 */
export async function firstSymlink(
  root: string,
  path: string,
): Promise<{ path: string; target: string } | null> {
  if (!isInside(root, path) || path === root) {
    throw new RunError(`Refusing to touch ${JSON.stringify(path)}: not inside the plugins dir`);
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

/**
 * The `origin` URL of a git checkout, read from its `.git/config` without running git (a
 * checkout's config can make git run commands). Requires `--allow-read`.
 *
 * @returns The URL, or null when `dir` is not a checkout with an origin.
 */
export async function originUrl(dir: string): Promise<string | null> {
  const path = join(dir, ".git", "config");
  try {
    if (!(await Deno.lstat(path)).isFile) return null;
    const text = await readBounded(path, { maxBytes: 256 * 1024 });
    let inOrigin = false;
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim();
      if (line.startsWith("[")) inOrigin = /^\[remote\s+"origin"\]$/.test(line);
      const url = inOrigin ? /^url\s*=\s*(.+)$/.exec(line) : null;
      if (url) return url[1].trim().replace(/^"(.*)"$/, "$1");
    }
  } catch {
    // Not a checkout, or unreadable: unknown origin.
  }
  return null;
}

/**
 * Is `dir` a git checkout (a `.git` folder in it), as ty decides?
 */
export async function isCheckout(dir: string): Promise<boolean> {
  return (await Deno.lstat(join(dir, ".git")).catch(() => null))?.isDirectory ?? false;
}

// ty's provenance file, `<plugins-dir>/.sources.json`: install folder name -> where it came from.
// tyhooks reads and writes it in ty's shape so both tools sharing a plugins dir agree. `ref` is a
// tyhooks addition (ty reads past it; a later write by ty drops it).

/** The file's name inside the plugins dir. */
export const SOURCES_FILE = ".sources.json";

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

/**
 * Reads the records. A missing, unreadable or malformed file is an empty map, as in ty:
 * provenance is a convenience, never a precondition. Requires `--allow-read`.
 *
 * @returns Records by install folder name.
 */
export async function loadSources(pluginsDir: string): Promise<Record<string, InstalledSource>> {
  const path = join(pluginsDir, SOURCES_FILE);
  let text: string;
  try {
    // A FIFO planted there must not hang the call: regular files only.
    if (!(await Deno.lstat(path)).isFile) return {};
    text = await readBounded(path, { maxBytes: 1 << 20 });
  } catch {
    return {};
  }
  try {
    const data = JSON.parse(text);
    if (typeof data !== "object" || data === null || Array.isArray(data)) return {};
    const out: Record<string, InstalledSource> = {};
    for (const [name, value] of Object.entries(data)) {
      if (
        typeof value === "object" && value !== null && typeof (value as InstalledSource).source ===
          "string"
      ) {
        out[name] = value as InstalledSource;
      }
    }
    return out;
  } catch {
    return {};
  }
}

/**
 * Sets (or, with `null`, drops) one folder's record, rewriting the file as ty does: sorted keys,
 * two-space indent, a final newline, written to a temp file and renamed. Requires
 * `--allow-read` and `--allow-write`.
 *
 * @param pluginsDir The plugins dir (must exist).
 * @param record Its new record, or null to drop it.
 */
export async function saveSource(
  pluginsDir: string,
  folder: string,
  record: InstalledSource | null,
): Promise<void> {
  const all = await loadSources(pluginsDir);
  if (record === null) {
    if (!(folder in all)) return;
    delete all[folder];
  } else {
    all[folder] = record;
  }
  // Go's encoding/json writes map keys sorted, and struct fields in declaration order.
  const sorted = Object.fromEntries(
    Object.keys(all).sort().map((k) => [k, ordered(all[k])]),
  );
  const path = join(pluginsDir, SOURCES_FILE);
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(sorted, null, 2) + "\n", {
    createNew: true,
    mode: 0o644,
  });
  try {
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
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

// `plugins remove NAME` as a library call: delete one plugin's own folder or one install folder,
// and nothing outside the real plugins dir. A symlink in the plugins dir is unlinked, never
// followed; a plugin reached through a symlinked collection is refused.

/**
 * What {@linkcode removePlugin} removed.
 */
export interface RemoveResult {
  /** The path removed (a folder, or a symlink that was unlinked). */
  path: string;
  /** True when a symlink was unlinked (its target untouched). */
  unlinked: boolean;
  /** The install folder that keeps the rest when a plugin inside it was removed, else null. */
  keptFolder: string | null;
}

/**
 * Removes what NAME means: a plugin (by name, else by folder name) or an install folder.
 * Requires `--allow-read` and `--allow-write`.
 *
 * @param name A plugin name or a folder name, as `plugins list` shows them.
 * @returns What was removed.
 * @throws {RunError} When nothing has that name, or removing it would reach outside the plugins
 * dir through a symlink.
 * @example
 * ```ts
 * import { removePlugin } from "./installed.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.mkdir(`${root}/team/one/routines/r`, { recursive: true });
 * await Deno.writeTextFile(`${root}/team/one/plugin.yaml`, "name: one\n");
 * await Deno.writeTextFile(`${root}/team/one/routines/r/prompt.md`, "hi\n");
 * const removed = await removePlugin(root, "one");
 * console.assert(removed.path === `${root}/team/one` && removed.keptFolder === `${root}/team`);
 * ```
 */
export async function removePlugin(pluginsDir: string, name: string): Promise<RemoveResult> {
  const index = await loadPlugins(pluginsDir);
  const target = await findNamed(index, name);
  if (target === null) {
    throw new RunError(
      `No plugin named ${JSON.stringify(name)} in ${JSON.stringify(index.dir)}`,
      { hint: 'hint: see "tyhooks plugins list"' },
    );
  }
  const root = index.dir;
  const realRoot = await Deno.realPath(root);
  const link = await firstSymlink(root, target.dir);
  if (link !== null && link.path !== target.dir) {
    // Deleting through the link would delete where it points: the attack of issue 12.
    const top = installFolderOf(root, link.path);
    throw new RunError(
      `Refusing to remove ${JSON.stringify(name)}: it lies inside ${
        JSON.stringify(link.path)
      }, a symlink to ${JSON.stringify(link.target)}, outside the plugins dir`,
      {
        hint: link.path === join(root, top)
          ? `hint: remove the symlink itself with "tyhooks plugins remove ${top}"`
          : `hint: remove the symlink ${JSON.stringify(link.path)} itself`,
      },
    );
  }
  const top = installFolderOf(root, target.dir);
  const nested = target.dir !== join(root, top);
  if (link !== null) {
    await Deno.remove(target.dir);
  } else {
    const real = await Deno.realPath(target.dir);
    if (
      real === realRoot || !isInside(realRoot, real) ||
      real !== join(realRoot, relative(root, target.dir))
    ) {
      throw new RunError(
        `Refusing to remove ${JSON.stringify(target.dir)}: not inside the plugins dir`,
      );
    }
    await Deno.remove(real, { recursive: true });
  }
  if (!nested) await saveSource(realRoot, top, null);
  return {
    path: target.dir,
    unlinked: link !== null,
    keptFolder: nested && (await Deno.lstat(dirname(target.dir)).catch(() => null)) !== null
      ? join(root, top)
      : null,
  };
}
