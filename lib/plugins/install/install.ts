/**
 * `plugins add` and `plugins update` as library calls, as ty installs (README, "Installing
 * plugins"). A fresh install, or a copy's update, is built and loaded in a staging folder first
 * and moved in only when it holds a usable plugin, so a broken install leaves nothing behind. A
 * checkout is pulled in place (`--ff-only`, keeping what its plugins wrote there) and reset when
 * the result holds no usable plugin.
 *
 * @module
 */

import { loadPlugins } from "../load.ts";
import { MAX_DIRS, SEARCH_CUT } from "../discover.ts";
import type { LoadWarning, Plugin, PluginIndex } from "../types.ts";
import { isInside } from "../script_path.ts";
import { quoted } from "../../text.ts";
import { basename, dirname, join, relative } from "../../paths.ts";
import { InputError, RunError } from "../../errors.ts";
import {
  checkInstallName,
  checkRef,
  installFolderName,
  type InstallSource,
  isInstallFolder,
  parseInstallSource,
  sameSource,
} from "./source.ts";
import {
  cloneShallow,
  isCheckout,
  isRepository,
  originUrl,
  pullCheckout,
  resetCheckout,
} from "./git.ts";
import {
  describe,
  findNamed,
  firstSymlink,
  type InstalledSource,
  installFolderOf,
  loadSources,
  saveSource,
  sourcesToChange,
  withInstallLock,
} from "./installed.ts";

/** Options of {@linkcode installPlugin}. */
export interface InstallOptions {
  /** Install folder name; default the repository's or folder's base name. */
  name?: string;
  /** Branch, tag or commit to check out (git sources); recorded for updates. */
  ref?: string;
  /** Stops a running git. */
  signal?: AbortSignal;
  /** Sees git's progress output as it comes (give it when stderr is a terminal). */
  onProgress?: (chunk: Uint8Array) => void;
  /** Hears that another add, update or remove of the plugins dir runs, and this one waits. */
  onWait?: () => void;
}

/** Options of {@linkcode updateInstalls}: those of the git calls, and the wait. */
export type UpdateOptions = Pick<InstallOptions, "signal" | "onProgress" | "onWait">;

/** What an install or update did. */
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
 * Installs `source` (a git URL, `owner/repo`, `github.com/owner/repo`, or a local path) into the
 * plugins dir (created when missing), or updates it when its folder already holds an install of
 * the same source. Requires `--allow-read`, `--allow-write`, `--allow-env` and `--allow-run`.
 *
 * @throws {InputError} For a SOURCE, `--name` or `--ref` of the wrong form.
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
  if (options.name !== undefined) checkInstallName(options.name);
  await checkLocal(source, { parsed, ref });
  const folder = options.name ?? installFolderName(parsed);
  if (!isInstallFolder(folder)) {
    throw new RunError(
      `Cannot install ${quoted(source)}: ${quoted(folder)} is not a safe folder name`,
      { hint: "hint: give one with --name" },
    );
  }
  await Deno.mkdir(pluginsDir, { recursive: true });
  const root = await Deno.realPath(pluginsDir);
  const dest = join(root, folder);
  const from = parsed.kind === "git" ? parsed.url : parsed.path;
  return await withInstallLock(root, async () => {
    const kept = await installedThere(dest, { source, from });
    return await placeInstall(dest, {
      ...kept,
      source: from,
      ...(ref !== undefined ? { ref } : {}),
    }, options);
  }, options);
}

// A local source must be a folder, and only a repository has refs.
async function checkLocal(
  source: string,
  { parsed, ref }: { parsed: InstallSource; ref: string | undefined },
): Promise<void> {
  if (parsed.kind !== "local") return;
  if (!(await Deno.stat(parsed.path).catch(() => null))?.isDirectory) {
    throw new RunError(`Cannot install ${quoted(source)}: no such folder`);
  }
  if (ref !== undefined && !(await isRepository(parsed.path))) {
    throw new InputError(
      `Flag "--ref" needs a git source: ${quoted(source)} is a folder that is copied`,
      { input: "--ref" },
    );
  }
}

/**
 * The record of the install in `dest` when it is of the same source (ty re-adds by pulling the
 * checkout there); undefined when there is none; a `RunError` when it holds anything else.
 */
async function installedThere(
  dest: string,
  { source, from }: { source: string; from: string },
): Promise<InstalledSource | undefined> {
  const existing = await Deno.lstat(dest).catch(() => null);
  if (existing === null) return undefined;
  const folder = basename(dest);
  const recorded = (await loadSources(dirname(dest)))[folder];
  const refuse = (what: string) =>
    new RunError(
      `Cannot install ${quoted(source)}: ${quoted(dest)} ${what}`,
      { hint: `hint: remove it first (tyhooks plugins remove ${folder}) or install under --name` },
    );
  if (existing.isSymlink) throw refuse("is a symlink");
  if (!existing.isDirectory) throw refuse("is not a folder");
  const origin = recorded?.source ?? (await isCheckout(dest) ? await originUrl(dest) : null);
  if (origin === null) throw refuse("already exists and has no recorded source");
  if (!sameSource(origin, from)) throw refuse(`already holds an install of ${origin}`);
  return recorded;
}

/** One install's update: what it became, or why it failed (then it is unchanged). */
export type UpdateOutcome =
  | { folder: string; ok: true; result: InstallResult }
  | { folder: string; ok: false; error: Error };

/**
 * Updates the install holding NAME (a plugin, plugin folder or install folder), or every install
 * whose source is known: one outcome per install, in folder order. Requires `--allow-read`,
 * `--allow-write`, `--allow-env` and `--allow-run` (git).
 */
export async function updateInstalls(
  pluginsDir: string,
  name?: string,
  options: UpdateOptions = {},
): Promise<UpdateOutcome[]> {
  const root = await Deno.realPath(pluginsDir).catch(() => null);
  if (root === null) {
    if (name === undefined) return [];
    throw new RunError(`No plugin or install named ${quoted(name)}: the plugins dir is empty`);
  }
  return await withInstallLock(root, async () => {
    const sources = await loadSources(root);
    const folders = name === undefined
      ? await knownInstalls(root, sources)
      : [await installNamed(root, name)];
    const outcomes: UpdateOutcome[] = [];
    for (const folder of folders) {
      try {
        options.signal?.throwIfAborted();
        const result = await updateOne(join(root, folder), { ...options, record: sources[folder] });
        outcomes.push({ folder, ok: true, result });
      } catch (error) {
        if (name !== undefined || options.signal?.aborted) throw error;
        outcomes.push({ folder, ok: false, error: error as Error });
      }
    }
    return outcomes;
  }, options);
}

// The install folders whose source is known (recorded, or a checkout's origin), sorted.
async function knownInstalls(
  root: string,
  sources: Record<string, InstalledSource>,
): Promise<string[]> {
  const folders = [];
  for await (const entry of Deno.readDir(root)) {
    if (entry.name.startsWith(".") || !entry.isDirectory) continue;
    if (entry.name in sources || await isCheckout(join(root, entry.name))) {
      folders.push(entry.name);
    }
  }
  return folders.sort();
}

// The install folder holding what NAME means.
async function installNamed(root: string, name: string): Promise<string> {
  const dir = await findNamed(await loadPlugins(root), name);
  if (dir === null) {
    throw new RunError(
      `No plugin or install named ${quoted(name)} in ${quoted(root)}`,
      { hint: 'hint: see "tyhooks plugins list"' },
    );
  }
  return installFolderOf(root, dir);
}

async function updateOne(
  dir: string,
  options: UpdateOptions & { record: InstalledSource | undefined },
): Promise<InstallResult> {
  const { record: recorded, ...placeOptions } = options;
  const folder = basename(dir);
  const link = await firstSymlink(dirname(dir), dir);
  if (link !== null) {
    // Updating it would write where the link points, outside the plugins dir.
    throw new RunError(
      `Cannot update ${quoted(folder)}: it is a symlink to ${quoted(link.target)}`,
      { hint: "hint: update it where it lives" },
    );
  }
  const record = recorded ??
    (await isCheckout(dir) ? { source: await originUrl(dir) ?? "" } : { source: "" });
  const again = `hint: remove it and add it again: tyhooks plugins remove ${folder}`;
  if (record.source === "") {
    throw new RunError(
      `Cannot update ${quoted(folder)}: where it came from is unknown ` +
        "(no recorded source, no git origin)",
      { hint: again },
    );
  }
  try {
    await parseInstallSource(record.source);
    if (record.ref !== undefined) checkRef(record.ref, '"ref"');
  } catch (error) {
    // Read from .sources.json or the checkout, not from this command line: no usage error.
    if (!(error instanceof InputError)) throw error;
    const where = recorded
      ? `its record in ${quoted(join(dirname(dir), ".sources.json"))}`
      : "its git origin";
    throw new RunError(
      `Cannot update ${quoted(folder)}: ${where} is not usable: ${error.message}`,
      { hint: again },
    );
  }
  return await placeInstall(dir, record, placeOptions);
}

/**
 * Puts what `record` names in as `dest` (a checkout there pulled in place, else staged and swapped
 * in) and records its provenance; on a `RunError`, nothing changed.
 */
async function placeInstall(
  dest: string,
  record: InstalledSource,
  options: UpdateOptions = {},
): Promise<InstallResult> {
  await parseInstallSource(record.source);
  if (record.ref !== undefined) checkRef(record.ref);
  // Refused before anything is placed: the record must be kept with the install.
  await sourcesToChange(dirname(dest));
  const there = await Deno.lstat(dest).catch(() => null);
  const result = record.subdir === undefined && there?.isDirectory && await isCheckout(dest)
    ? await updateInPlace(dest, record, options)
    : await installStaged(dest, record, options);
  await saveSource(dest, { ...record, installed_at: now() });
  return { folder: basename(dest), dir: dest, ...result };
}

type Placed = Omit<InstallResult, "folder" | "dir">;

// Staging lives inside the plugins dir (so the swap is a rename, and nothing is written outside
// it), under a folder named .git, which ty's discovery and tyhooks' skip: a half-made install is
// never loaded.
const STAGING = ".tyhooks-staging";
// In each stage, locked while its install runs: a stage nobody holds is a killed install's.
const STAGE_LOCK = ".lock";
// A stage younger than this may be one whose install has not locked it yet, so it is kept.
const STAGE_GRACE_MS = 60_000;

async function installStaged(
  dest: string,
  record: InstalledSource,
  options: UpdateOptions,
): Promise<Placed> {
  const root = dirname(dest);
  const staging = join(root, STAGING, ".git");
  await Deno.mkdir(staging, { recursive: true });
  await removeStaleStages(staging);
  const stage = await Deno.makeTempDir({ dir: staging, prefix: "add-" });
  const held = await Deno.open(join(stage, STAGE_LOCK), { create: true, write: true });
  await held.lock(true);
  try {
    const staged = join(stage, basename(dest));
    const via = await fetchSource(record, staged, { ...options, stage });
    const index = await loadPlugins(stage);
    const warnings = index.warnings.map((w) => ({
      ...w,
      path: join(dest, relative(staged, w.path)),
    }));
    // Discovery would stop short in the whole plugins dir from then on, guards unseen.
    if (index.warnings.some((w) => w.path === stage && w.message.startsWith(SEARCH_CUT))) {
      throw new RunError(
        `Cannot install ${quoted(describe(record))}: it holds more than ${MAX_DIRS} folders, ` +
          "and with it every search of the plugins dir would stop short (every guarded call " +
          "would then block)",
        { hint: "hint: install the plugin's own folder, not the tree around it" },
      );
    }
    if (index.plugins.length === 0) {
      throw noUsablePlugin(record, warnings, {
        hint: "hint: a plugin is a folder with a plugin.yaml naming a hook, action, service, " +
          "workflow or routine",
      });
    }
    const clash = clashOf(index.plugins, { installed: await loadPlugins(root), dest });
    if (clash !== undefined) throw clashError(record, clash);
    const updated = await swapIn(staged, dest, { park: staging });
    return { plugins: index.plugins.map((p) => p.name).sort(), updated, via, warnings };
  } finally {
    held.close();
    await Deno.remove(stage, { recursive: true }).catch(() => {});
    // Left in place while another install is using them (not empty).
    await Deno.remove(staging).catch(() => {});
    await Deno.remove(join(root, STAGING)).catch(() => {});
  }
}

// The stages of installs that were killed (kill -9, a crash), which their own cleanup never
// reached: one copy of a source each, tens of MB for a big one, invisible to every command.
async function removeStaleStages(staging: string): Promise<void> {
  // Another install's cleanup may have just removed the staging dir: nothing to clean then.
  const entries = await Array.fromAsync(Deno.readDir(staging)).catch(() => []);
  for (const entry of entries) {
    if (!entry.isDirectory || !entry.name.startsWith("add-")) continue;
    const stage = join(staging, entry.name);
    if (await stageInUse(stage)) continue;
    await Deno.remove(stage, { recursive: true }).catch(() => {});
  }
}

async function stageInUse(stage: string): Promise<boolean> {
  // A young stage may be one whose install has not locked it yet: never judged by its lock.
  const info = await Deno.lstat(stage).catch(() => null);
  if (info === null || Date.now() - (info.mtime?.getTime() ?? 0) < STAGE_GRACE_MS) return true;
  let lock: Deno.FsFile;
  try {
    lock = await Deno.open(join(stage, STAGE_LOCK), { write: true });
  } catch {
    return false; // No lock after a minute: a killed install's (or an older tyhooks').
  }
  try {
    return !(await lock.tryLock(true));
  } finally {
    lock.close();
  }
}

type Clash = { plugin: Plugin; other: Plugin };

// A plugin of the new copy whose name one installed outside `dest` has: the loader would keep
// one of them and silently drop the other.
function clashOf(
  plugins: Plugin[],
  { installed, dest }: { installed: PluginIndex; dest: string },
): Clash | undefined {
  const others = installed.plugins.filter((p) => !isInside(dest, p.dir));
  for (const plugin of plugins) {
    const other = others.find((p) => p.name === plugin.name);
    if (other) return { plugin, other };
  }
  return undefined;
}

function clashError(
  record: InstalledSource,
  { plugin, other, after = "" }: Clash & { after?: string },
): RunError {
  return new RunError(
    `Source ${quoted(describe(record))} holds plugin ${quoted(plugin.name)}, already installed ` +
      `in ${quoted(other.dir)}${after}`,
    { hint: `hint: remove that one first (tyhooks plugins remove ${plugin.name})` },
  );
}

async function updateInPlace(
  dest: string,
  record: InstalledSource,
  options: UpdateOptions,
): Promise<Placed> {
  const before = await loadPlugins(dirname(dest));
  let commit: string;
  try {
    commit = await pullCheckout(dest, { ...options, ref: record.ref });
  } catch (error) {
    if (!(error instanceof RunError) || options.signal?.aborted) throw error;
    // Most often an upstream that rewrote its history, which --ff-only (as ty pulls) refuses.
    const folder = basename(dest);
    throw new RunError(`Cannot update ${quoted(folder)}: ${error.message}`, {
      hint: `hint: if its upstream rewrote its history, add it afresh: tyhooks plugins remove ` +
        `${folder} && tyhooks plugins add ${record.source} --name ${folder}` +
        (record.ref === undefined ? "" : ` --ref ${record.ref}`),
    });
  }
  const after = await loadPlugins(dirname(dest));
  const mine = after.plugins.filter((p) => isInside(dest, p.dir));
  const warnings = after.warnings.filter((w) => isInside(dest, w.path));
  const clash = clashOf(mine, { installed: before, dest });
  if (mine.length === 0 || clash !== undefined) {
    await resetCheckout(dest, commit, options);
    const back = `; ${quoted(dest)} is back where it was`;
    throw clash
      ? clashError(record, { ...clash, after: back })
      : noUsablePlugin(record, warnings, { after: back });
  }
  return { plugins: mine.map((p) => p.name).sort(), updated: true, via: "git", warnings };
}

function noUsablePlugin(
  record: InstalledSource,
  warnings: LoadWarning[],
  { after = "", hint }: { after?: string; hint?: string },
): RunError {
  const why = warnings.map((w) => w.message).slice(0, 3).join("; ") || "it holds no plugin.yaml";
  const source = JSON.stringify(describe(record));
  return new RunError(`Source ${source} holds no usable plugin: ${why}${after}`, { hint });
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

// Swaps the new copy in with two renames (the old one parked in `park` until it is deleted), so
// the install is never half there. Returns whether an old copy was replaced.
async function swapIn(fresh: string, dest: string, { park }: { park: string }): Promise<boolean> {
  const info = await Deno.lstat(dest).catch(() => null);
  if (info === null) {
    await Deno.rename(fresh, dest);
    return false;
  }
  if (!info.isDirectory) {
    throw new RunError(`Refusing to replace ${quoted(dest)}: it is not a folder`);
  }
  const old = join(park, `old-${crypto.randomUUID()}`);
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

interface FetchOptions extends UpdateOptions {
  /** The staging folder `to` is in: the fetch is kept inside it. */
  stage: string;
}

// Fetches what `record` names (its source, at its ref; its subdir only) into `to`, a new folder:
// a repository is cloned, a plain folder copied. Returns how.
async function fetchSource(
  record: InstalledSource,
  to: string,
  options: FetchOptions,
): Promise<"git" | "copy"> {
  const { stage, signal, onProgress } = options;
  const source = await parseInstallSource(record.source);
  // A ty catalog install copies one folder out of a checkout: fetch the whole, keep the part.
  const fetchTo = record.subdir ? join(stage, ".repo") : to;
  let via: "git" | "copy" = "git";
  if (source.kind === "git" || await isRepository(source.path)) {
    const url = source.kind === "git" ? source.url : source.path;
    await cloneShallow(url, fetchTo, { signal, onProgress, ref: record.ref });
  } else {
    via = "copy";
    const real = await Deno.realPath(source.path).catch(() => null);
    if (real === null || !(await Deno.stat(real)).isDirectory) {
      throw new RunError(`Cannot copy ${quoted(source.path)}: no such folder`);
    }
    if (isInside(real, stage)) {
      throw new RunError(`Cannot install ${quoted(source.path)}: the plugins dir is inside it`);
    }
    await Deno.mkdir(fetchTo);
    await copyDir(real, fetchTo);
  }
  if (record.subdir) {
    const from = join(fetchTo, record.subdir);
    const real = await Deno.realPath(from).catch(() => null);
    const base = await Deno.realPath(fetchTo);
    // Never a folder outside the fetched source (a "../" or symlinked subdir), nor all of it.
    if (real === null || !isInside(base, real) || real === base) {
      throw new RunError(`Source ${quoted(describe(record))}: no such folder`);
    }
    await Deno.mkdir(to);
    await copyDir(real, to);
  }
  return via;
}

// Modes are kept (scripts stay executable), symlinks copied as links (the loader's confinement
// check still applies to them); `.git`, FIFOs, sockets and devices are left out.
async function copyDir(from: string, to: string): Promise<void> {
  for await (const entry of Deno.readDir(from)) {
    if (entry.name === ".git") continue;
    const source = join(from, entry.name);
    const target = join(to, entry.name);
    if (entry.isSymlink) {
      await Deno.symlink(await Deno.readLink(source), target);
    } else if (entry.isDirectory) {
      await Deno.mkdir(target);
      await copyDir(source, target);
    } else if (entry.isFile) {
      await Deno.copyFile(source, target);
    }
  }
  // Set after filling it: a read-only source folder must not block the copy.
  const { mode } = await Deno.stat(from);
  if (mode !== null) await Deno.chmod(to, mode & 0o7777);
}
