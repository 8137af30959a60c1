/**
 * `plugins add` as a library call: install a plugin from a git URL (clone) or a local folder
 * (copy) into the plugins dir; re-adding the same plugin updates it; anything else already there
 * is never overwritten.
 *
 * @module
 */

import { basename, join, resolve } from "node:path";
import { RunError, UsageError } from "../errors.ts";
import { copyDir } from "./copy_dir.ts";
import { isSafeDirName, sourceBaseName } from "./dir_name.ts";
import { runGit } from "./git.ts";
import { readPluginName } from "./manifest_name.ts";
import { loadPlugins } from "./load.ts";
import { isInside } from "./script_path.ts";

/**
 * Options of {@linkcode installPlugin}.
 *
 * @example
 * ```ts
 * import { type InstallOptions, installPlugin } from "./install.ts";
 * const source = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${source}/plugin.yaml`, "name: hello\nhooks:\n  task.done: done.sh\n");
 * await Deno.writeTextFile(`${source}/done.sh`, "#!/bin/sh\n", { mode: 0o755 });
 * const options: InstallOptions = { name: "hello-copy" };
 * const result = await installPlugin(await Deno.makeTempDir(), source, options);
 * console.assert(result.dir.endsWith("/hello-copy") && result.via === "copy");
 * ```
 */
export interface InstallOptions {
  /** Folder name to install under; default the manifest's name (else the source's base name). */
  name?: string;
  /** Stops a running git. */
  signal?: AbortSignal;
}

/**
 * What was installed.
 *
 * @example
 * ```ts
 * import { installPlugin, type InstallResult } from "./install.ts";
 * const source = await Deno.makeTempDir();
 * await Deno.writeTextFile(`${source}/plugin.yaml`, "name: hello\nhooks:\n  task.done: done.sh\n");
 * await Deno.writeTextFile(`${source}/done.sh`, "#!/bin/sh\n", { mode: 0o755 });
 * const plugins = await Deno.makeTempDir();
 * await installPlugin(plugins, source);
 * const again: InstallResult = await installPlugin(plugins, source);
 * console.assert(again.name === "hello" && again.updated);
 * ```
 */
export interface InstallResult {
  /** The plugin's name (from its manifest). */
  name: string;
  /** Where it now is. */
  dir: string;
  /** True when an installed copy of the same plugin was updated. */
  updated: boolean;
  /** How it was fetched. */
  via: "git" | "copy";
}

// http(s)://, ssh://, git://, file://, or scp-like user@host:path.
const GIT_URL = /^(?:[a-z][a-z0-9+.-]*:\/\/|[^\s/@:]+@[^\s/:]+:)/i;

/**
 * Installs (or updates) a plugin. Requires `--allow-read`, `--allow-write`, and
 * `--allow-run=git` for a git source.
 *
 * @param pluginsDir The plugins dir (created when missing).
 * @param source A git URL, a local git repository, or a local plugin folder.
 * @param options Folder name and abort signal.
 * @returns What was installed where.
 * @throws {UsageError} For a `--name` that is not one safe path segment.
 * @throws {RunError} When the source is not a plugin, git fails, or the destination holds
 * something else.
 * @example
 * ```ts ignore
 * import { installPlugin } from "./install.ts";
 * const result = await installPlugin("/home/me/.config/task/plugins", "https://host/me/x.git");
 * console.log(result.updated ? "updated" : "installed", result.dir);
 * ```
 */
export async function installPlugin(
  pluginsDir: string,
  source: string,
  options: InstallOptions = {},
): Promise<InstallResult> {
  if (options.name !== undefined && !isSafeDirName(options.name)) {
    throw new UsageError(
      `Invalid value ${JSON.stringify(options.name)} for flag "--name": expected one folder name`,
      "hint: letters, digits, - and _ are safe; no /, no leading dot",
    );
  }
  const root = resolve(pluginsDir);
  const via = await sourceKind(source);
  if (via === "copy") await assertNamed(resolve(source), source);
  await Deno.mkdir(root, { recursive: true });
  if (via === "copy" && isInside(await Deno.realPath(source), await Deno.realPath(root))) {
    // Copying a folder into itself would never end.
    throw new RunError(`Cannot install ${JSON.stringify(source)}: the plugins dir is inside it`);
  }
  // A dot-folder inside the plugins dir: invisible to discovery, and renamed into place at once.
  // mkdir (not makeTempDir, which is private to the user) so the umask decides its mode.
  const stage = join(root, `.tyhooks-add-${crypto.randomUUID()}`);
  await Deno.mkdir(stage);
  try {
    if (via === "git") await runGit(["clone", "--quiet", "--", source, stage], options);
    else await copyDir(resolve(source), stage, { keepMode: true });
    const name = await assertNamed(stage, source);
    const folder = options.name ?? (isSafeDirName(name) ? name : sourceBaseName(source));
    if (!isSafeDirName(folder)) {
      throw new RunError(
        `Cannot install ${JSON.stringify(source)}: no safe folder name for it: use --name`,
      );
    }
    const dest = join(root, folder);
    const existing = await Deno.lstat(dest).catch(() => null);
    if (existing !== null) await assertSamePlugin(dest, existing, name);
    await assertNoOtherCopy(root, dest, name);
    if (existing === null) {
      await Deno.rename(stage, dest);
      return { name, dir: dest, updated: false, via };
    }
    if (via === "git" && (await Deno.lstat(join(dest, ".git")).catch(() => null)) !== null) {
      // The clone only told us what the source is; the installed checkout moves forward itself.
      await runGit(["-C", dest, "pull", "--ff-only", "--quiet"], options);
    } else {
      await replaceDir(root, dest, stage);
    }
    return { name, dir: dest, updated: true, via };
  } finally {
    await Deno.remove(stage, { recursive: true }).catch(() => {});
  }
}

async function sourceKind(source: string): Promise<"git" | "copy"> {
  const info = await Deno.stat(source).catch(() => null);
  if (info?.isDirectory) {
    // A bare repository (HEAD at its top) is cloned; any other folder is copied.
    const head = await Deno.stat(join(source, "HEAD")).catch(() => null);
    const manifest = await Deno.lstat(join(source, "plugin.yaml")).catch(() => null);
    return head?.isFile && manifest === null ? "git" : "copy";
  }
  if (GIT_URL.test(source)) return "git";
  throw new RunError(
    `Cannot install ${JSON.stringify(source)}: it is neither a folder nor a git URL`,
  );
}

async function assertNamed(dir: string, source: string): Promise<string> {
  const result = await readPluginName(dir);
  if (result.ok) return result.name;
  throw new RunError(`Cannot install ${JSON.stringify(source)}: ${result.reason}`);
}

async function assertNoOtherCopy(root: string, dest: string, name: string): Promise<void> {
  const other = (await loadPlugins(root)).plugins.find((p) => p.name === name && p.dir !== dest);
  if (other === undefined) return;
  throw new RunError(
    `Cannot install ${JSON.stringify(name)}: a plugin of that name is already in ` +
      `${JSON.stringify(other.dir)}: remove it first (tyhooks plugins remove ${name})`,
  );
}

async function assertSamePlugin(dest: string, info: Deno.FileInfo, name: string): Promise<void> {
  const refuse = (what: string) =>
    new RunError(
      `Refusing to overwrite ${JSON.stringify(dest)}: ${what}: use --name to install ${
        JSON.stringify(name)
      } elsewhere`,
    );
  if (info.isSymlink) throw refuse("it is a symlink");
  if (!info.isDirectory) throw refuse("it is not a folder");
  const there = await readPluginName(dest);
  if (!there.ok) throw refuse(`it is not a plugin (${there.reason})`);
  if (there.name !== name) throw refuse(`it holds another plugin (${JSON.stringify(there.name)})`);
}

// Swaps the new copy in with two renames, so the plugin is never half there.
async function replaceDir(root: string, dest: string, fresh: string): Promise<void> {
  const old = join(root, `.tyhooks-old-${basename(fresh)}`);
  await Deno.rename(dest, old);
  try {
    await Deno.rename(fresh, dest);
  } catch (error) {
    await Deno.rename(old, dest);
    throw error;
  }
  await Deno.remove(old, { recursive: true });
}
