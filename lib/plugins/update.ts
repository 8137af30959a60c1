/**
 * `plugins update [NAME]` as a library call: re-fetch an install (or every one) from where it
 * came from (ty's `.sources.json`, else the checkout's origin) and swap it in only when the new
 * copy holds a usable plugin; otherwise the working copy stays and the update is an error.
 *
 * @module
 */

import { join } from "../_path.ts";
import { RunError } from "../errors.ts";
import { loadPlugins } from "./load.ts";
import { type InstallOptions, type InstallResult, placeInstall } from "./install.ts";
import {
  findNamed,
  firstSymlink,
  installFolderOf,
  isCheckout,
  loadSources,
  originUrl,
} from "./installed.ts";

/** One install's update: what it became, or why it failed (then it is unchanged). */
export type UpdateOutcome =
  | { folder: string; ok: true; result: InstallResult }
  | { folder: string; ok: false; error: Error };

/**
 * Updates the install holding NAME (a plugin name, a plugin folder or an install folder), or,
 * without NAME, every install whose source is known. Requires `--allow-read`, `--allow-write`,
 * `--allow-env` and `--allow-run` (git).
 *
 * @param name What to update; undefined for all.
 * @param options Progress and abort signal.
 * @returns One outcome per install, in folder order.
 * @throws {RunError} When NAME names nothing installed, or an install whose source is unknown.
 */
export async function updateInstalls(
  pluginsDir: string,
  name?: string,
  options: Pick<InstallOptions, "signal" | "onProgress"> = {},
): Promise<UpdateOutcome[]> {
  const root = await Deno.realPath(pluginsDir).catch(() => null);
  if (root === null) {
    if (name === undefined) return [];
    throw new RunError(
      `No plugin or install named ${JSON.stringify(name)}: the plugins dir is empty`,
    );
  }
  const sources = await loadSources(root);
  let folders: string[];
  if (name === undefined) {
    folders = [];
    for await (const entry of Deno.readDir(root)) {
      if (entry.name.startsWith(".") || !entry.isDirectory) continue;
      if (entry.name in sources || await isCheckout(join(root, entry.name))) {
        folders.push(entry.name);
      }
    }
    folders.sort();
  } else {
    const target = await findNamed(await loadPlugins(root), name);
    if (target === null) {
      throw new RunError(
        `No plugin or install named ${JSON.stringify(name)} in ${JSON.stringify(root)}`,
        { hint: 'hint: see "tyhooks plugins list"' },
      );
    }
    folders = [installFolderOf(root, target.dir)];
  }
  const outcomes: UpdateOutcome[] = [];
  for (const folder of folders) {
    try {
      options.signal?.throwIfAborted();
      outcomes.push({ folder, ok: true, result: await updateOne(root, folder, sources, options) });
    } catch (error) {
      if (name !== undefined || options.signal?.aborted) throw error;
      outcomes.push({ folder, ok: false, error: error as Error });
    }
  }
  return outcomes;
}

async function updateOne(
  root: string,
  folder: string,
  sources: Awaited<ReturnType<typeof loadSources>>,
  options: Pick<InstallOptions, "signal" | "onProgress">,
): Promise<InstallResult> {
  const dir = join(root, folder);
  const link = await firstSymlink(root, dir);
  if (link !== null) {
    // Updating it would write where the link points, outside the plugins dir.
    throw new RunError(
      `Cannot update ${JSON.stringify(folder)}: it is a symlink to ${JSON.stringify(link.target)}`,
      { hint: "hint: update it where it lives" },
    );
  }
  const record = sources[folder] ??
    (await isCheckout(dir) ? { source: await originUrl(dir) ?? "" } : { source: "" });
  if (record.source === "") {
    throw new RunError(
      `Cannot update ${JSON.stringify(folder)}: where it came from is unknown ` +
        "(no recorded source, no git origin)",
      { hint: `hint: remove it and add it again: tyhooks plugins remove ${folder}` },
    );
  }
  return await placeInstall(root, folder, record, options);
}
