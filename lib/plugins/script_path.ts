/**
 * Where a plugin's scripts and service dirs are, read as ty reads them: joined to the plugin dir
 * (`/x` is `<dir>/x`, as Go's `filepath.Join` makes it) and allowed out of it (a collection's
 * plugins often share `../shared/*.sh`), which only `plugins validate` reports.
 *
 * @module
 */

import { join, sep } from "../paths.ts";
import { unsafeMode } from "../fs.ts";
import { quoted } from "../text.ts";
import type { Observe } from "./types.ts";

/** A plugin dir as given and as resolved through symlinks. */
export interface PluginRoot {
  /** Absolute path, as discovered. */
  dir: string;
  /** `Deno.realPath(dir)`. */
  realDir: string;
  observe?: Observe;
}

/**
 * The result of a path check: the absolute path (and, when it resolves outside the plugin dir,
 * where to), or why it cannot be used.
 */
export type PathCheck =
  | {
    ok: true;
    path: string;
    outside: string | null;
    /** For a script: why another user could change it (StrictModes), else null. */
    unsafe?: { reason: string; hint: string } | null;
  }
  | { ok: false; reason: string; hint?: string };

/** Is `child` equal to `parent` or inside it? Both must be absolute and normalized. */
export function isInside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * Checks a hook or action script, as written: a regular file, executable. Gives its absolute
 * path (symlinks kept) and where it leads when that is outside the plugin dir.
 */
export function checkScript(root: PluginRoot, script: string): PathCheck {
  const where = resolvePath(root, script);
  if (!where.ok) return where;
  if (where.real === null) {
    // "/usr/bin/x" that exists elsewhere: say which path was meant.
    if (!script.startsWith("/")) return { ok: false, reason: "does not exist" };
    const path = quoted(where.path);
    return {
      ok: false,
      reason: `is joined to the plugin dir, as ty joins it, and ${path} does not exist`,
    };
  }
  let info = where.info;
  try {
    info ??= Deno.statSync(where.real);
  } catch (error) {
    return { ok: false, reason: `cannot be read: ${(error as Error).message}` };
  }
  if (!info.isFile) return { ok: false, reason: "is not a regular file" };
  if (info.mode !== null && (info.mode & 0o111) === 0) {
    return { ok: false, reason: "is not executable", hint: `chmod +x "${where.path}"` };
  }
  return {
    ok: true,
    path: where.path,
    outside: where.outside,
    unsafe: unsafeMode(info, where.real),
  };
}

/** Checks a service's `cwd`, as written: when it exists, a directory; "" is the plugin dir. */
export function checkCwd(root: PluginRoot, cwd: string): PathCheck {
  if (cwd === "") return { ok: true, path: root.dir, outside: null };
  const where = resolvePath(root, cwd);
  if (!where.ok) return where;
  if (where.real === null) return { ok: true, path: where.path, outside: where.outside };
  let isDir = true;
  try {
    isDir = Deno.statSync(where.real).isDirectory;
  } catch {
    // Gone since it was resolved: a service may create it; ty does not check either.
  }
  if (!isDir) return { ok: false, reason: "is not a directory" };
  return { ok: true, path: where.path, outside: where.outside };
}

type Resolved =
  | { ok: true; path: string; real: string | null; outside: string | null; info?: Deno.FileInfo }
  | { ok: false; reason: string; hint?: string };

// Joins `written` to the plugin dir and resolves it through symlinks; `real` is null when
// nothing is there, `outside` the resolved path when it lies outside the plugin dir.
function resolvePath(root: PluginRoot, written: string): Resolved {
  if (written.includes("\0")) return { ok: false, reason: "contains a NUL byte" };
  const path = join(root.dir, written);
  const lexicallyOut = !isInside(root.dir, path);
  let real: string;
  root.observe?.(path);
  if (!written.includes("/") && written !== "." && written !== "..") {
    // A file right in the plugin dir that is no link: its real path is the dir's and its name,
    // and its lstat is its stat (one call instead of realpath and stat).
    try {
      const info = Deno.lstatSync(path);
      if (info.isFile) {
        real = join(root.realDir, written);
        root.observe?.(real);
        return { ok: true, path, real, outside: null, info };
      }
    } catch {
      // The long way says why.
    }
  }
  try {
    real = Deno.realPathSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return { ok: true, path, real: null, outside: lexicallyOut ? path : null };
    }
    return { ok: false, reason: `cannot be read: ${(error as Error).message}` };
  }
  root.observe?.(real);
  const outside = lexicallyOut || !isInside(root.realDir, real) ? real : null;
  return { ok: true, path, real, outside };
}
