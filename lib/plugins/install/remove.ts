/**
 * `plugins remove NAME` as a library call: delete one plugin's own folder or one install folder,
 * and nothing outside the real plugins dir. A symlink in the plugins dir is unlinked, never
 * followed; a plugin reached through a symlinked collection is refused.
 *
 * @module
 */

import { loadPlugins } from "../load.ts";
import { isInside } from "../script_path.ts";
import { quoted } from "../../text.ts";
import { dirname, join, relative } from "../../paths.ts";
import { RunError } from "../../errors.ts";
import {
  findNamed,
  firstSymlink,
  installFolderOf,
  saveSource,
  sourcesToChange,
  withInstallLock,
} from "./installed.ts";

/** What {@linkcode removePlugin} removed. */
export interface RemoveResult {
  /** The path removed (a folder, or a symlink that was unlinked). */
  path: string;
  /** True when a symlink was unlinked (its target untouched). */
  unlinked: boolean;
  /** The install folder that keeps the rest when a plugin inside it was removed, else null. */
  keptFolder: string | null;
}

/**
 * Removes what `name` means: a plugin (by name, else folder name) or an install folder; a
 * `RunError` when none, or through a symlink. Requires `--allow-read` and `--allow-write`.
 *
 * @example
 * ```ts
 * import { removePlugin } from "./remove.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.mkdir(`${root}/team/one/routines/r`, { recursive: true });
 * await Deno.writeTextFile(`${root}/team/one/plugin.yaml`, "name: one\n");
 * await Deno.writeTextFile(`${root}/team/one/routines/r/prompt.md`, "hi\n");
 * const removed = await removePlugin(root, "one");
 * console.assert(removed.path === `${root}/team/one` && removed.keptFolder === `${root}/team`);
 * ```
 */
export async function removePlugin(
  pluginsDir: string,
  name: string,
  options: { onWait?: () => void; signal?: AbortSignal } = {},
): Promise<RemoveResult> {
  // The dir locked is the one searched, though a link to it is re-pointed meanwhile.
  const root = await Deno.realPath(pluginsDir).catch(() => pluginsDir);
  return await withInstallLock(root, () => removeLocked(root, name), options);
}

async function removeLocked(pluginsDir: string, name: string): Promise<RemoveResult> {
  const index = await loadPlugins(pluginsDir);
  const dir = await findNamed(index, name);
  if (dir === null) {
    throw new RunError(
      `No plugin named ${quoted(name)} in ${quoted(index.dir)}`,
      { hint: 'hint: see "tyhooks plugins list"' },
    );
  }
  const root = index.dir;
  const realRoot = await Deno.realPath(root);
  const link = await firstSymlink(root, dir);
  if (link !== null && link.path !== dir) {
    // Deleting through the link would delete where it points, outside the plugins dir.
    const linkTop = installFolderOf(root, link.path);
    throw new RunError(
      `Refusing to remove ${quoted(name)}: it lies inside ${quoted(link.path)}, a symlink to ${
        quoted(link.target)
      }, outside the plugins dir`,
      {
        hint: link.path === join(root, linkTop)
          ? `hint: remove the symlink itself with "tyhooks plugins remove ${linkTop}"`
          : `hint: remove the symlink ${quoted(link.path)} itself`,
      },
    );
  }
  const top = installFolderOf(root, dir);
  const nested = dir !== join(root, top);
  // Refused before anything is removed: its record must go with it.
  if (!nested) await sourcesToChange(realRoot);
  if (link !== null) {
    await Deno.remove(dir);
  } else {
    const real = await Deno.realPath(dir);
    if (
      real === realRoot || !isInside(realRoot, real) ||
      real !== join(realRoot, relative(root, dir))
    ) {
      throw new RunError(`Refusing to remove ${quoted(dir)}: not inside the plugins dir`);
    }
    await Deno.remove(real, { recursive: true });
  }
  if (!nested) await saveSource(join(realRoot, top), null);
  return {
    path: dir,
    unlinked: link !== null,
    keptFolder: nested && (await Deno.lstat(dirname(dir)).catch(() => null)) !== null
      ? join(root, top)
      : null,
  };
}
