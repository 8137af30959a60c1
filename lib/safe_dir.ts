/**
 * Whether another user could change what a directory holds (sshd's StrictModes, applied to a
 * path): used for the daemon's socket, which clients trust to be tyhooks' own.
 *
 * @module
 */

import { dirname, resolve } from "./_path.ts";

/**
 * Why someone other than the user (or root) could replace an entry of `dir`, or null when nobody
 * can. Every directory on the way, as written and as resolved, must be owned by the user or root
 * and, when group or others may write to it, sticky (as `/tmp` is, so only an entry's owner can
 * remove or rename it); a symbolic link on the way must be the user's or root's.
 *
 * Requires `--allow-read`.
 *
 * @param dir An existing directory.
 */
export function unsafeDirReason(dir: string): string | null {
  let me: number;
  try {
    me = Deno.uid() ?? -1;
  } catch {
    return "the user id is not known";
  }
  let real: string;
  try {
    real = Deno.realPathSync(dir);
  } catch (error) {
    return `"${dir}" cannot be resolved: ${(error as Error).message}`;
  }
  for (const path of new Set([...chain(resolve(dir)), ...chain(real)])) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch (error) {
      return `"${path}" cannot be checked: ${(error as Error).message}`;
    }
    if (info.uid !== null && info.uid !== me && info.uid !== 0) {
      return `"${path}" belongs to another user (uid ${info.uid})`;
    }
    if (info.isSymlink || info.mode === null) continue;
    const sticky = (info.mode & 0o1000) !== 0;
    if ((info.mode & 0o022) !== 0 && !sticky) {
      const mode = (info.mode & 0o7777).toString(8).padStart(4, "0");
      return `"${path}" is writable by group or others and not sticky (mode ${mode})`;
    }
  }
  return null;
}

/** `dir` and each of its ancestors, up to `/`. */
function chain(dir: string): string[] {
  const paths = [dir];
  for (let up = dirname(dir); up !== paths.at(-1); up = dirname(up)) paths.push(up);
  return paths;
}
