/**
 * Confinement: a plugin's scripts and service directories must stay inside the plugin dir, after
 * `..`, absolute paths and symlinks are resolved. A plugin cannot make tyhooks run a file it does
 * not ship.
 *
 * @module
 */

import { isAbsolute, resolve, sep } from "node:path";
import { observe } from "./_observe.ts";

/** A plugin dir as given and as resolved through symlinks. */
export interface PluginRoot {
  /** Absolute path, as discovered. */
  dir: string;
  /** `Deno.realPath(dir)`. */
  realDir: string;
}

/** The result of a path check: the absolute path inside the plugin dir, or why not. */
export type PathCheck = { ok: true; path: string } | { ok: false; reason: string; hint?: string };

/**
 * Is `child` equal to `parent` or inside it? Both must be absolute and normalized.
 *
 * @example
 * ```ts
 * import { isInside } from "./script_path.ts";
 * console.assert(isInside("/p/x", "/p/x/a.sh") && !isInside("/p/x", "/p/xy/a.sh"));
 * ```
 */
export function isInside(parent: string, child: string): boolean {
  return child === parent || child.startsWith(parent.endsWith(sep) ? parent : parent + sep);
}

/**
 * Checks a hook or action script: inside the plugin dir (after symlinks), a regular file,
 * executable. Requires `--allow-read`.
 *
 * @param root The plugin dir.
 * @param script The path as written in the manifest, relative to the plugin dir.
 * @returns The absolute path (inside `root.dir`, symlinks kept), or the reason it is refused.
 * @example
 * ```ts
 * import { checkScript } from "./script_path.ts";
 * const check = await checkScript({ dir: "/tmp", realDir: "/tmp" }, "../etc/passwd");
 * console.assert(!check.ok && check.reason.includes("outside"));
 * ```
 */
export async function checkScript(root: PluginRoot, script: string): Promise<PathCheck> {
  const where = await resolveInside(root, script);
  if (!where.ok) return where;
  if (where.real === null) return { ok: false, reason: "does not exist" };
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(where.real);
  } catch (error) {
    return { ok: false, reason: `cannot be read: ${(error as Error).message}` };
  }
  if (!info.isFile) return { ok: false, reason: "is not a regular file" };
  if (info.mode !== null && (info.mode & 0o111) === 0) {
    return { ok: false, reason: "is not executable", hint: `chmod +x "${where.path}"` };
  }
  return { ok: true, path: where.path };
}

/**
 * Checks a service's `cwd`: inside the plugin dir (after symlinks) and, when it exists, a
 * directory. An empty `cwd` is the plugin dir. Requires `--allow-read`.
 *
 * @param root The plugin dir.
 * @param cwd The directory as written, relative to the plugin dir.
 * @returns The absolute directory, or the reason it is refused.
 * @example
 * ```ts
 * import { checkCwd } from "./script_path.ts";
 * const check = await checkCwd({ dir: "/tmp", realDir: "/tmp" }, "");
 * console.assert(check.ok && check.path === "/tmp");
 * ```
 */
export async function checkCwd(root: PluginRoot, cwd: string): Promise<PathCheck> {
  if (cwd === "") return { ok: true, path: root.dir };
  const where = await resolveInside(root, cwd);
  if (!where.ok) return where;
  if (where.real === null) return { ok: true, path: where.path };
  const info = await Deno.stat(where.real).catch(() => null);
  if (info !== null && !info.isDirectory) return { ok: false, reason: "is not a directory" };
  return { ok: true, path: where.path };
}

type Resolved =
  | { ok: true; path: string; real: string | null }
  | { ok: false; reason: string; hint?: string };

// Resolves `relative` against the plugin dir and through symlinks; `real` is null when nothing
// is there.
async function resolveInside(root: PluginRoot, relative: string): Promise<Resolved> {
  if (relative.includes("\0")) return { ok: false, reason: "contains a NUL byte" };
  const path = resolve(root.dir, relative);
  if (isAbsolute(relative) || !isInside(root.dir, path)) {
    return { ok: false, reason: "is outside the plugin dir" };
  }
  let real: string;
  observe(path);
  try {
    real = await Deno.realPath(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory) {
      return { ok: true, path, real: null };
    }
    return { ok: false, reason: `cannot be read: ${(error as Error).message}` };
  }
  if (!isInside(root.realDir, real)) {
    return { ok: false, reason: `resolves outside the plugin dir (to ${JSON.stringify(real)})` };
  }
  observe(real);
  return { ok: true, path, real };
}
