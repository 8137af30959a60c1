/**
 * `plugins add` as a library call, as ty installs: the source is cloned (`--depth 1`) or copied
 * into `<plugins-dir>/<folder>`, the folder named after the repository or local folder. A source
 * with `plugin.yaml` at its root is one plugin; one without is a collection, installed whole.
 *
 * A fresh install (and the update of a copy) is built in a staging folder inside the plugins dir
 * and loaded there first: only a copy holding at least one usable plugin is moved in, so a broken
 * install leaves nothing behind. An installed checkout is updated in place as ty does (`git pull
 * --ff-only`, which keeps the files its plugins wrote there) and reset to where it was when the
 * result holds no usable plugin.
 *
 * @module
 */

import { join, relative } from "../_path.ts";
import { RunError, UsageError } from "../errors.ts";
import { copyDir } from "./copy_dir.ts";
import { isSafeDirName } from "./dir_name.ts";
import { cloneShallow, pullCheckout, resetCheckout } from "./git.ts";
import { loadPlugins } from "./load.ts";
import { isInside } from "./script_path.ts";
import type { LoadWarning } from "./types.ts";
import {
  checkRef,
  installFolderName,
  type InstallSource,
  parseInstallSource,
  sameSource,
} from "./install_source.ts";
import { type InstalledSource, loadSources, saveSource } from "./sources_file.ts";
import { isCheckout, originUrl } from "./installed.ts";

/**
 * Options of {@linkcode installPlugin}.
 */
export interface InstallOptions {
  /** Install folder name; default the repository's or folder's base name. */
  name?: string;
  /** Branch, tag or commit to check out (git sources); recorded for updates. */
  ref?: string;
  /** Stops a running git. */
  signal?: AbortSignal;
  /** Sees git's progress output as it comes (give it when stderr is a terminal). */
  onProgress?: (chunk: Uint8Array) => void;
}

/**
 * What an install or update did.
 */
export interface InstallResult {
  /** The install folder's name. */
  folder: string;
  /** Where it now is. */
  dir: string;
  /** The usable plugins in it, sorted. */
  plugins: string[];
  /** True when an existing install was replaced. */
  updated: boolean;
  /** How it was fetched. */
  via: "git" | "copy";
  /** What loading it dropped or skipped (paths as installed). */
  warnings: LoadWarning[];
}

/**
 * Installs SOURCE, or updates it when its folder already holds an install of the same source.
 * Requires `--allow-read`, `--allow-write`, `--allow-env` and `--allow-run` (git).
 *
 * @param pluginsDir The plugins dir (created when missing).
 * @param source A git URL, `owner/repo`, `github.com/owner/repo`, or a local path.
 * @param options Folder name, ref, progress and abort signal.
 * @returns What was installed where.
 * @throws {UsageError} For a SOURCE, `--name` or `--ref` of the wrong form.
 * @throws {RunError} When git fails, the source holds no usable plugin, or the folder holds
 * something else.
 * @example
 * ```ts
 * import { installPlugin } from "./install.ts";
 * const source = await Deno.makeTempDir({ prefix: "hello-" });
 * await Deno.writeTextFile(`${source}/plugin.yaml`, "name: hello\nhooks:\n  task.done: done.sh\n");
 * await Deno.writeTextFile(`${source}/done.sh`, "#!/bin/sh\n", { mode: 0o755 });
 * const plugins = await Deno.makeTempDir();
 * const result = await installPlugin(plugins, source, { name: "hello" });
 * console.assert(result.dir.endsWith("/hello") && result.plugins[0] === "hello");
 * console.assert(!result.updated && result.via === "copy");
 * ```
 */
export async function installPlugin(
  pluginsDir: string,
  source: string,
  options: InstallOptions = {},
): Promise<InstallResult> {
  const parsed = await parseInstallSource(source);
  const ref = options.ref === undefined ? undefined : checkRef(options.ref);
  if (options.name !== undefined && !isSafeDirName(options.name)) {
    throw new UsageError(
      `Invalid value ${JSON.stringify(options.name)} for flag "--name": expected one folder name`,
      "hint: letters, digits, - and _ are safe; no /, no leading dot",
    );
  }
  if (parsed.kind === "local" && !(await Deno.stat(parsed.path).catch(() => null))?.isDirectory) {
    throw new RunError(`Cannot install ${JSON.stringify(source)}: no such folder`);
  }
  if (ref !== undefined && parsed.kind === "local" && !(await isRepository(parsed.path))) {
    throw new UsageError(
      `Flag "--ref" needs a git source: ${JSON.stringify(source)} is a folder that is copied`,
    );
  }
  const folder = options.name ?? installFolderName(parsed);
  if (!isSafeDirName(folder)) {
    throw new RunError(
      `Cannot install ${JSON.stringify(source)}: ${
        JSON.stringify(folder)
      } is not a safe folder name`,
      { hint: "hint: give one with --name" },
    );
  }
  await Deno.mkdir(pluginsDir, { recursive: true });
  const root = await Deno.realPath(pluginsDir);
  const dest = join(root, folder);
  const recorded = (await loadSources(root))[folder];
  const existing = await Deno.lstat(dest).catch(() => null);
  const sourceText = parsed.kind === "git" ? parsed.url : parsed.path;
  if (existing !== null) {
    // ty re-adds by pulling the checkout already there; anything else there is never replaced.
    const refuse = (what: string) =>
      new RunError(
        `Cannot install ${JSON.stringify(source)}: ${JSON.stringify(dest)} ${what}`,
        {
          hint: `hint: remove it first (tyhooks plugins remove ${folder}) or install under --name`,
        },
      );
    if (existing.isSymlink) throw refuse("is a symlink");
    if (!existing.isDirectory) throw refuse("is not a folder");
    const from = recorded?.source ?? (await isCheckout(dest) ? await originUrl(dest) : null);
    if (from === null) throw refuse("already exists and has no recorded source");
    if (!sameSource(from, sourceText)) throw refuse(`already holds an install of ${from}`);
  }
  return await placeInstall(root, folder, {
    ...(existing !== null ? recorded : undefined),
    source: sourceText,
    ...(ref !== undefined
      ? { ref }
      : existing !== null && recorded?.ref
      ? { ref: recorded.ref }
      : {}),
  }, options);
}

/**
 * Fetches `record` into a staging folder, loads it, and swaps it in as `<root>/<folder>`,
 * recording its provenance. The shared half of `add` and `update`.
 *
 * @param root The plugins dir, resolved through symlinks.
 * @param folder The install folder's name (one safe path segment).
 * @param record Where it comes from (`subdir`, `id` and `ref` honoured).
 * @param options Progress and abort signal.
 * @returns What is now installed.
 * @throws {RunError} When fetching fails or the result holds no usable plugin; nothing changed.
 */
export async function placeInstall(
  root: string,
  folder: string,
  record: InstalledSource,
  options: Pick<InstallOptions, "signal" | "onProgress"> = {},
): Promise<InstallResult> {
  const source = await parseInstallSource(record.source);
  if (record.ref !== undefined) checkRef(record.ref);
  const dest = join(root, folder);
  const there = await Deno.lstat(dest).catch(() => null);
  if (record.subdir === undefined && there?.isDirectory && await isCheckout(dest)) {
    return await updateInPlace(root, folder, record, options);
  }
  // Inside the plugins dir (so the swap is a rename, and nothing is written outside it), under a
  // folder named .git, which ty's discovery and tyhooks' skip: a half-made install is never loaded.
  const staging = join(root, STAGING, ".git");
  await Deno.mkdir(staging, { recursive: true });
  const stage = await Deno.makeTempDir({ dir: staging, prefix: "add-" });
  try {
    const staged = join(stage, folder);
    const via = await fetchSource(source, record, stage, staged, options);
    const index = await loadPlugins(stage);
    const warnings = index.warnings.map((w) => ({
      ...w,
      path: join(dest, relative(staged, w.path)),
    }));
    if (index.plugins.length === 0) {
      const reasons = warnings.map((w) => w.message).slice(0, 3);
      const why = reasons.length > 0 ? reasons.join("; ") : "it holds no plugin.yaml";
      throw new RunError(
        `Source ${JSON.stringify(describe(record))} holds no usable plugin: ${why}`,
        {
          hint: "hint: a plugin is a folder with a plugin.yaml naming a hook, action, service, " +
            "workflow or routine",
        },
      );
    }
    // Two plugins of one name: the loader would keep one and silently drop the other.
    const others = (await loadPlugins(root)).plugins.filter((p) => !isInside(dest, p.dir));
    for (const plugin of index.plugins) {
      const other = others.find((p) => p.name === plugin.name);
      if (other) {
        throw new RunError(
          `Source ${JSON.stringify(describe(record))} holds plugin ${
            JSON.stringify(plugin.name)
          }, already installed in ${JSON.stringify(other.dir)}`,
          { hint: `hint: remove that one first (tyhooks plugins remove ${plugin.name})` },
        );
      }
    }
    const updated = await swapIn(staging, staged, dest);
    await saveSource(root, folder, {
      ...record,
      installed_at: now(),
    });
    return {
      folder,
      dir: dest,
      plugins: index.plugins.map((p) => p.name).sort(),
      updated,
      via,
      warnings,
    };
  } finally {
    await Deno.remove(stage, { recursive: true }).catch(() => {});
    // Left in place while another install is using them (not empty).
    await Deno.remove(staging).catch(() => {});
    await Deno.remove(join(root, STAGING)).catch(() => {});
  }
}

async function updateInPlace(
  root: string,
  folder: string,
  record: InstalledSource,
  options: Pick<InstallOptions, "signal" | "onProgress">,
): Promise<InstallResult> {
  const dest = join(root, folder);
  const before = await loadPlugins(root);
  const others = new Map(
    before.plugins.filter((p) => !isInside(dest, p.dir)).map((p) => [p.name, p.dir]),
  );
  const commit = await pullCheckout(dest, { ...options, ref: record.ref });
  const after = await loadPlugins(root);
  const mine = after.plugins.filter((p) => isInside(dest, p.dir));
  const warnings = after.warnings.filter((w) => isInside(dest, w.path));
  const clash = mine.find((p) => others.has(p.name));
  if (mine.length === 0 || clash !== undefined) {
    await resetCheckout(dest, commit, options);
    if (clash !== undefined) {
      throw new RunError(
        `Source ${JSON.stringify(describe(record))} now holds plugin ${
          JSON.stringify(clash.name)
        }, already installed in ${JSON.stringify(others.get(clash.name))}; ${
          JSON.stringify(dest)
        } is back where it was`,
      );
    }
    const why = warnings.map((w) => w.message).slice(0, 3).join("; ") ||
      "it holds no plugin.yaml";
    throw new RunError(
      `Source ${JSON.stringify(describe(record))} holds no usable plugin: ${why}; ${
        JSON.stringify(dest)
      } is back where it was`,
    );
  }
  await saveSource(root, folder, { ...record, installed_at: now() });
  return {
    folder,
    dir: dest,
    plugins: mine.map((p) => p.name).sort(),
    updated: true,
    via: "git",
    warnings,
  };
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

/** The staging folder's name in the plugins dir. */
const STAGING = ".tyhooks-staging";

function describe(record: InstalledSource): string {
  return record.subdir ? `${record.source}/${record.subdir}` : record.source;
}

async function fetchSource(
  source: InstallSource,
  record: InstalledSource,
  stage: string,
  staged: string,
  options: Pick<InstallOptions, "signal" | "onProgress">,
): Promise<"git" | "copy"> {
  // A ty catalog install copies one folder out of a checkout: fetch the whole, keep the part.
  const fetchTo = record.subdir ? join(stage, ".repo") : staged;
  let via: "git" | "copy" = "git";
  if (source.kind === "git" || await isRepository(source.path)) {
    const url = source.kind === "git" ? source.url : source.path;
    await cloneShallow(url, fetchTo, { ...options, ref: record.ref });
  } else {
    via = "copy";
    const real = await Deno.realPath(source.path).catch(() => null);
    if (real === null || !(await Deno.stat(real)).isDirectory) {
      throw new RunError(`Cannot copy ${JSON.stringify(source.path)}: no such folder`);
    }
    if (isInside(real, stage)) {
      throw new RunError(
        `Cannot install ${JSON.stringify(source.path)}: the plugins dir is inside it`,
      );
    }
    await Deno.mkdir(fetchTo);
    await copyDir(real, fetchTo, { keepMode: true });
  }
  if (record.subdir) {
    const from = join(fetchTo, record.subdir);
    const real = await Deno.realPath(from).catch(() => null);
    const base = await Deno.realPath(fetchTo);
    // Never a folder outside the fetched source (a "../" or symlinked subdir), nor all of it.
    if (real === null || !isInside(base, real) || real === base) {
      throw new RunError(`Source ${JSON.stringify(describe(record))}: no such folder`);
    }
    await Deno.mkdir(staged);
    await copyDir(real, staged, { keepMode: true });
  }
  return via;
}

// A work tree with .git, or a bare repository (HEAD and objects at its top): cloned, as ty does.
async function isRepository(path: string): Promise<boolean> {
  const has = async (name: string) =>
    (await Deno.lstat(join(path, name)).catch(() => null)) !== null;
  if (await has(".git")) return true;
  return (await has("HEAD")) && (await has("objects")) && !(await has("plugin.yaml"));
}

// Swaps the new copy in with two renames, so the install is never half there. Returns whether
// an old copy was replaced.
async function swapIn(staging: string, fresh: string, dest: string): Promise<boolean> {
  const info = await Deno.lstat(dest).catch(() => null);
  if (info === null) {
    await Deno.rename(fresh, dest);
    return false;
  }
  if (!info.isDirectory) {
    throw new RunError(`Refusing to replace ${JSON.stringify(dest)}: it is not a folder`);
  }
  const old = join(staging, `old-${crypto.randomUUID()}`);
  await Deno.rename(dest, old);
  try {
    await Deno.rename(fresh, dest);
  } catch (error) {
    await Deno.rename(old, dest);
    throw error;
  }
  await Deno.remove(old, { recursive: true });
  return true;
}
