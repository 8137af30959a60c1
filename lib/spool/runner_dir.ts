/**
 * A runner's dir, `run-<id>/`: where a process that runs entries keeps those it claimed, alive
 * for exactly as long as that process holds the lock on its `.lock`.
 *
 * @module
 */

import { join } from "../paths.ts";
import { checkPrivateFile } from "../fs.ts";
import { readDirSafe } from "./entry.ts";

export const RUNNER = /^run-[0-9a-f]{16}$/;
const LOCK = ".lock";

/** Makes a runner dir, locked before it is renamed into place: none is ever seen unlocked. */
export async function makeRunnerDir(spool: string): Promise<{ dir: string; lock: Deno.FsFile }> {
  const id = crypto.randomUUID().replaceAll("-", "").slice(0, 16);
  const temp = join(spool, `.run-${id}.tmp`);
  const dir = join(spool, `run-${id}`);
  await Deno.mkdir(temp, { mode: 0o700 });
  let lock: Deno.FsFile | undefined;
  try {
    lock = await Deno.open(join(temp, LOCK), { write: true, createNew: true, mode: 0o600 });
    await lock.lock(true);
    await Deno.rename(temp, dir);
    return { dir, lock };
  } catch (error) {
    // The spool tries again at its next add: nothing of this attempt is left behind.
    lock?.close();
    await Deno.remove(temp, { recursive: true }).catch(() => {});
    throw error;
  }
}

/** A runner is alive while it holds its lock (a dir without one died removing its dir). */
export function isLive(dir: string): boolean {
  const path = join(dir, LOCK);
  if (checkPrivateFile(path, 0, "the runner lock") !== null) return false;
  let file: Deno.FsFile;
  try {
    file = Deno.openSync(path, { read: true });
  } catch {
    return false;
  }
  try {
    return !file.tryLockSync(true);
  } finally {
    file.close();
  }
}

/** Removes a runner dir that holds nothing but its lock: a dead runner's entries keep it. */
export function removeRunnerDir(dir: string): void {
  if (readDirSafe(dir).some((item) => item.name !== LOCK)) return;
  try {
    Deno.removeSync(join(dir, LOCK));
    Deno.removeSync(dir);
  } catch {
    // Another runner removed it first: harmless.
  }
}
