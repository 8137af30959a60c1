/**
 * Copies a plugin folder: files keep their permission bits (so scripts stay executable),
 * symlinks are copied as symlinks (the loader's confinement check still applies to them), `.git`
 * folders are left out, and anything else (FIFOs, sockets, devices) is skipped.
 *
 * @module
 */

import { join } from "../_path.ts";

/** Options of {@linkcode copyDir}. */
export interface CopyOptions {
  /** Also give `to` itself the mode of `from` (its contents always get theirs). Default false. */
  keepMode?: boolean;
}

/**
 * Copies `from` into `to` (which must exist), recursively. Requires `--allow-read` and
 * `--allow-write`.
 *
 * @param options Whether `to` takes the mode of `from`.
 */
export async function copyDir(from: string, to: string, options: CopyOptions = {}): Promise<void> {
  for await (const entry of Deno.readDir(from)) {
    if (entry.name === ".git") continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isSymlink) {
      await Deno.symlink(await Deno.readLink(source), target);
    } else if (entry.isDirectory) {
      await Deno.mkdir(target);
      await copyDir(source, target, { keepMode: true });
    } else if (entry.isFile) {
      await Deno.copyFile(source, target);
    }
  }
  if (options.keepMode) {
    // Set after filling it: a read-only source folder must not block the copy.
    const { mode } = await Deno.stat(from);
    if (mode !== null) await Deno.chmod(to, mode & 0o7777);
  }
}
