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
 * What is installed, as `update` and `remove` see it: which install a name means (a plugin name,
 * a plugin folder, or an install folder, as in ty), where a checkout came from (ty's
 * `.sources.json`), and whether a path is reached through a symlink (then nothing is written or
 * deleted through it).
 *
 * @module
 */

import { loadPlugins } from "./load.ts";
import type { LoadWarning, Plugin, PluginIndex } from "./types.ts";
import { failureReason, runScript, succeeded } from "../process/run_script.ts";
import { readBounded } from "../fs.ts";
import { isInside } from "./script_path.ts";
import { isSafeDirName } from "./scaffold.ts";
import { hasControl, quoted } from "../text.ts";
import { basename, dirname, join, relative, resolve, sep } from "../path.ts";
import { InputError, RunError } from "../errors.ts";

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
}

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
  // A leading "-" would make the folder's name read as an option in `plugins remove -rf`.
  if (
    options.name !== undefined && (!isSafeDirName(options.name) || options.name.startsWith("-"))
  ) {
    throw new InputError(
      `Invalid value ${quoted(options.name)} for flag "--name": expected one folder name`,
      {
        input: "--name",
        hint: "hint: letters, digits, - and _ are safe; no /, and no - or . first",
      },
    );
  }
  if (parsed.kind === "local" && !(await Deno.stat(parsed.path).catch(() => null))?.isDirectory) {
    throw new RunError(`Cannot install ${quoted(source)}: no such folder`);
  }
  if (ref !== undefined && parsed.kind === "local" && !(await isRepository(parsed.path))) {
    throw new InputError(
      `Flag "--ref" needs a git source: ${quoted(source)} is a folder that is copied`,
      { input: "--ref" },
    );
  }
  const folder = options.name ?? installFolderName(parsed);
  if (!isSafeDirName(folder)) {
    throw new RunError(
      `Cannot install ${quoted(source)}: ${quoted(folder)} is not a safe folder name`,
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
        `Cannot install ${quoted(source)}: ${quoted(dest)} ${what}`,
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
 * The shared half of `add` and `update`: fetches `record` into a staging folder, loads it, and
 * swaps it in as `<root>/<folder>` (`root` resolved through symlinks), recording its provenance.
 *
 * @throws {RunError} When fetching fails or the result holds no usable plugin; nothing changed.
 */
async function placeInstall(
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
      throw noUsablePlugin(record, warnings, "", {
        hint: "hint: a plugin is a folder with a plugin.yaml naming a hook, action, service, " +
          "workflow or routine",
      });
    }
    // Two plugins of one name: the loader would keep one and silently drop the other.
    const others = (await loadPlugins(root)).plugins.filter((p) => !isInside(dest, p.dir));
    for (const plugin of index.plugins) {
      const other = others.find((p) => p.name === plugin.name);
      if (other) {
        throw new RunError(
          `Source ${quoted(describe(record))} holds plugin ${
            quoted(plugin.name)
          }, already installed in ${quoted(other.dir)}`,
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
        `Source ${quoted(describe(record))} now holds plugin ${
          quoted(clash.name)
        }, already installed in ${quoted(others.get(clash.name)!)}; ${
          quoted(dest)
        } is back where it was`,
      );
    }
    throw noUsablePlugin(record, warnings, `; ${quoted(dest)} is back where it was`);
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

function noUsablePlugin(
  record: InstalledSource,
  warnings: LoadWarning[],
  after: string,
  options?: { hint: string },
): RunError {
  const why = warnings.map((w) => w.message).slice(0, 3).join("; ") || "it holds no plugin.yaml";
  const source = JSON.stringify(describe(record));
  return new RunError(`Source ${source} holds no usable plugin: ${why}${after}`, options);
}

function now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, "Z");
}

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
      throw new RunError(`Cannot copy ${quoted(source.path)}: no such folder`);
    }
    if (isInside(real, stage)) {
      throw new RunError(
        `Cannot install ${quoted(source.path)}: the plugins dir is inside it`,
      );
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
    await Deno.mkdir(staged);
    await copyDir(real, staged);
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
    throw new RunError(`Refusing to replace ${quoted(dest)}: it is not a folder`);
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

// Copies a plugin folder into `to` (which exists): files and folders keep their permission bits
// (so scripts stay executable), symlinks are copied as symlinks (the loader's confinement check
// still applies to them), `.git` folders are left out, and anything else (FIFOs, sockets,
// devices) is skipped.
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

// The git calls of `plugins add` and `update`, through the project's runner: git and whatever
// it starts (ssh, credential helpers) run in their own process group, bounded by a timeout, and
// are terminated as a group on SIGINT/SIGTERM.

const GIT_TIMEOUT_MS = 5 * 60_000;

interface GitOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Sees git's stderr as it comes (its progress meter). */
  onProgress?: (chunk: Uint8Array) => void;
  /** A branch, tag or commit to check out (checked by `checkRef`). */
  ref?: string;
}

/**
 * `git <args>`'s stdout, or a RunError with git's own last words. git never prompts: a URL that
 * needs credentials or an unknown ssh host key fails instead of hanging.
 */
async function runGit(args: string[], options: GitOptions = {}): Promise<string> {
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const result = await runScript("git", {
    args,
    env: {
      GIT_TERMINAL_PROMPT: "0",
      GIT_ASKPASS: "",
      SSH_ASKPASS: "",
      // Only the transports SOURCE may name: never ext::, fd:: or a redirect to another.
      GIT_ALLOW_PROTOCOL: ALLOWED_PROTOCOLS,
      // ssh would otherwise ask about host keys or passwords on the terminal.
      GIT_SSH_COMMAND: Deno.env.get("GIT_SSH_COMMAND") ?? "ssh -o BatchMode=yes",
    },
    timeoutMs,
    signal: options.signal,
    onOutput: options.onProgress && ((stream, chunk) => {
      if (stream === "stderr") options.onProgress?.(chunk);
    }),
  });
  if (succeeded(result)) return result.stdout;
  // git's "fatal:" line says what went wrong; hints and advice follow it.
  const lines = result.stderr.trim().split("\n");
  const stderr = lines.find((l) => l.startsWith("fatal:")) ?? lines.at(-1) ?? "";
  const command = args[0] === "-C" ? args[2] : args[0];
  throw new RunError(
    `git ${command} failed (${failureReason(result, timeoutMs)})${stderr ? `: ${stderr}` : ""}`,
  );
}

/**
 * Clones `url` into `dest` with `--depth 1`, checking out `ref` when given: a branch or tag
 * through `--branch`, else (a commit) by fetching it alone. SOURCE and REF come after `--` or
 * glued to their flag, so neither can be read as an option.
 */
async function cloneShallow(url: string, dest: string, options: GitOptions = {}): Promise<void> {
  const progress = options.onProgress ? ["--progress"] : ["--quiet"];
  const { ref } = options;
  if (ref === undefined) {
    await runGit(["clone", "--depth", "1", ...progress, "--", url, dest], options);
    return;
  }
  try {
    await runGit(
      ["clone", "--depth", "1", ...progress, `--branch=${ref}`, "--", url, dest],
      options,
    );
    return;
  } catch (error) {
    // Not a branch or tag: a commit id is fetched alone (servers allow it over protocol v2).
    if (!/^[0-9a-f]{4,64}$/i.test(ref)) throw error;
    await Deno.remove(dest, { recursive: true }).catch(() => {});
  }
  await runGit(["clone", "--depth", "1", ...progress, "--no-checkout", "--", url, dest], options);
  await runGit(["-C", dest, "fetch", "--quiet", "--depth", "1", "origin", ref], options);
  await runGit(["-C", dest, "checkout", "--quiet", "--detach", "FETCH_HEAD"], options);
}

/**
 * Moves an installed checkout forward in place, as ty does (`git pull --ff-only`), or to `ref`
 * (fetched alone, checked out detached), keeping files the plugin wrote there (logs, state).
 * Returns the commit it was at before, to roll back to.
 */
async function pullCheckout(dir: string, options: GitOptions = {}): Promise<string> {
  const before = (await runGit(["-C", dir, "rev-parse", "--verify", "HEAD"], options)).trim();
  const progress = options.onProgress ? ["--progress"] : ["--quiet"];
  if (options.ref === undefined) {
    await runGit(["-C", dir, "pull", "--ff-only", ...progress], options);
  } else {
    await runGit(["-C", dir, "fetch", ...progress, "--depth", "1", "origin", options.ref], options);
    await runGit(["-C", dir, "checkout", "--quiet", "--detach", "FETCH_HEAD"], options);
  }
  return before;
}

async function resetCheckout(dir: string, commit: string, options: GitOptions = {}) {
  await runGit(["-C", dir, "reset", "--quiet", "--hard", commit], options);
}

// What `plugins add SOURCE` accepts, as ty accepts it: a git URL, a GitHub shorthand, or a local
// path. Everything git is given is checked here first, so that no SOURCE or REF can reach git as
// an option or through a transport other than https, ssh and file (no `ext::`, no `fd::`).

/** A parsed SOURCE: a URL git clones, or a local folder (cloned when a repository, else copied). */
export type InstallSource =
  | { kind: "git"; url: string }
  | { kind: "local"; path: string };

/** The transports git may use for an install (`GIT_ALLOW_PROTOCOL`). */
const ALLOWED_PROTOCOLS = "https:ssh:file";

const FORMS = [
  "hint: accepted forms:",
  "  https://host/owner/repo.git, ssh://[user@]host/path, git@host:owner/repo.git, file:///path",
  "  owner/repo or github.com/owner/repo (GitHub)",
  "  ./dir, ../dir, /dir, ~/dir (a local folder or repository)",
].join("\n");

// user@host:path, as scp and git write it. Neither user nor host may look like an option.
const SCP_LIKE = /^([A-Za-z0-9._~][A-Za-z0-9._~-]*)@([A-Za-z0-9.][A-Za-z0-9.-]*):(.+)$/;
const GITHUB_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

/**
 * Parses SOURCE. Requires `--allow-read` (a bare word that names an existing folder is a path, as
 * in ty) and `--allow-env` (HOME, for `~`).
 *
 * @throws {InputError} For anything that is not one of the accepted forms.
 */
export async function parseInstallSource(source: string): Promise<InstallSource> {
  const text = source.trim();
  const bad = (why: string) =>
    new InputError(`Invalid plugin source ${quoted(source)}: ${why}`, {
      input: "source",
      hint: FORMS,
    });
  if (text === "") throw bad("it is empty");
  if (hasControl(text)) throw bad("it holds control characters");
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) return { kind: "git", url: checkUrl(text, bad) };
  if (text.startsWith("github.com/")) {
    return { kind: "git", url: github(text.slice("github.com/".length), bad) };
  }
  const scp = SCP_LIKE.exec(text);
  if (scp !== null) {
    if (scp[3].startsWith("-")) throw bad("its path starts with -");
    return { kind: "git", url: text };
  }
  if (/^(?:\.{1,2}\/|\/|~\/|~$|\.{1,2}$)/.test(text)) return { kind: "local", path: local(text) };
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(text)) throw bad("that git transport is not allowed");
  // ty: a bare word naming an existing folder is a path; otherwise owner/repo means GitHub.
  if ((await Deno.stat(text).catch(() => null))?.isDirectory) {
    return { kind: "local", path: resolve(text) };
  }
  if (text.split("/").length === 2 && !/\s/.test(text)) {
    return { kind: "git", url: github(text, bad) };
  }
  throw bad("it is not a git URL, owner/repo, or a local path");
}

function checkUrl(text: string, bad: (why: string) => InputError): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad("it is not a valid URL");
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (!ALLOWED_PROTOCOLS.split(":").includes(scheme)) {
    throw bad(`the ${quoted(scheme)} transport is not allowed (https, ssh or file)`);
  }
  if (scheme !== "file" && (url.hostname === "" || url.hostname.startsWith("-"))) {
    throw bad("its host is empty or starts with -");
  }
  if (url.username.startsWith("-")) throw bad("its user starts with -");
  return text;
}

function github(path: string, bad: (why: string) => InputError): string {
  const parts = path.replace(/\/+$/, "").replace(/\.git$/, "").split("/");
  if (parts.length !== 2 || !parts.every((p) => GITHUB_NAME.test(p) && p !== "." && p !== "..")) {
    throw bad("expected owner/repo");
  }
  return `https://github.com/${parts[0]}/${parts[1]}.git`;
}

function local(path: string): string {
  if (path === "~" || path.startsWith("~/")) {
    const home = Deno.env.get("HOME");
    if (home) return resolve(home, path.slice(2));
  }
  return resolve(path);
}

/**
 * Checks a `--ref`: a branch, tag or commit name, which can never be read as an option.
 *
 * @throws {InputError} When it is empty, starts with `-`, or holds spaces or control characters.
 */
export function checkRef(ref: string): string {
  if (ref === "" || ref.startsWith("-") || /\s/.test(ref) || hasControl(ref)) {
    throw new InputError(
      `Invalid value ${quoted(ref)} for flag "--ref": expected a branch, tag or commit`,
      { input: "--ref", hint: "hint: a ref never starts with - and holds no spaces" },
    );
  }
  return ref;
}

/**
 * The install folder ty would use for a source (not yet checked to be safe): the repository's or
 * folder's base name without `.git` (`…/ty-notify.git` -> `ty-notify`).
 */
export function installFolderName(source: InstallSource): string {
  if (source.kind === "local") return basename(source.path).replace(/\.git$/, "");
  const path = source.url.replace(/[?#].*$/, "").replace(/\/+$/, "");
  const last = path.split(/[/:]/).at(-1) ?? "";
  return last.replace(/\.git$/, "");
}

/**
 * Do two recorded sources name the same repository? Trailing slashes and `.git` do not count,
 * so ty's `https://github.com/o/r` and tyhooks' `https://github.com/o/r.git` agree.
 */
export function sameSource(a: string, b: string): boolean {
  const norm = (s: string) => s.trim().replace(/\/+$/, "").replace(/\.git$/, "");
  return norm(a) === norm(b);
}

// `plugins update [NAME]` as a library call: re-fetch an install (or every one) from where it
// came from (ty's `.sources.json`, else the checkout's origin) and swap it in only when the new
// copy holds a usable plugin; otherwise the working copy stays and the update is an error.

/** One install's update: what it became, or why it failed (then it is unchanged). */
export type UpdateOutcome =
  | { folder: string; ok: true; result: InstallResult }
  | { folder: string; ok: false; error: Error };

/**
 * Updates the install holding NAME (a plugin name, a plugin folder or an install folder), or,
 * without NAME, every install whose source is known. Requires `--allow-read`, `--allow-write`,
 * `--allow-env` and `--allow-run` (git). One outcome per install, in folder order.
 *
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
      `No plugin or install named ${quoted(name)}: the plugins dir is empty`,
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
        `No plugin or install named ${quoted(name)} in ${quoted(root)}`,
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
      `Cannot update ${quoted(folder)}: it is a symlink to ${quoted(link.target)}`,
      { hint: "hint: update it where it lives" },
    );
  }
  const record = sources[folder] ??
    (await isCheckout(dir) ? { source: await originUrl(dir) ?? "" } : { source: "" });
  if (record.source === "") {
    throw new RunError(
      `Cannot update ${quoted(folder)}: where it came from is unknown ` +
        "(no recorded source, no git origin)",
      { hint: `hint: remove it and add it again: tyhooks plugins remove ${folder}` },
    );
  }
  return await placeInstall(root, folder, record, options);
}

// What is installed: finding an install, its provenance, and removing one.

/** What a NAME given to `update` or `remove` resolved to. */
interface NamedTarget {
  /** The folder meant, absolute, below the plugins dir (not resolved through symlinks). */
  dir: string;
  /** The plugin it names, when it names one. */
  plugin: Plugin | null;
}

/**
 * What NAME means, or null: a plugin's name first, then a folder directly in the plugins dir (an
 * install folder, a collection), then a plugin folder's base name (ty's fallback).
 */
async function findNamed(index: PluginIndex, name: string): Promise<NamedTarget | null> {
  const byName = index.plugins.find((p) => p.name === name);
  if (byName) return { dir: byName.dir, plugin: byName };
  if (name !== "" && !name.startsWith(".") && !name.includes("/") && name !== "..") {
    const folder = join(index.dir, name);
    const info = await Deno.lstat(folder).catch(() => null);
    if (info !== null && (info.isDirectory || info.isSymlink)) {
      return { dir: folder, plugin: index.plugins.find((p) => p.dir === folder) ?? null };
    }
  }
  const byFolder = index.plugins.find((p) => p.dir.split(sep).at(-1) === name);
  return byFolder ? { dir: byFolder.dir, plugin: byFolder } : null;
}

/** The install folder holding `dir`: its first path component below the plugins dir. */
function installFolderOf(root: string, dir: string): string {
  return relative(root, dir).split(sep)[0];
}

/** The first symlink on the way from `root` (excluded) to `path` (included), and its target. */
async function firstSymlink(
  root: string,
  path: string,
): Promise<{ path: string; target: string } | null> {
  if (!isInside(root, path) || path === root) {
    throw new RunError(`Refusing to touch ${quoted(path)}: not inside the plugins dir`);
  }
  let at = root;
  for (const part of relative(root, path).split(sep)) {
    at = join(at, part);
    const info = await Deno.lstat(at);
    if (info.isSymlink) {
      return { path: at, target: await Deno.realPath(at).catch(() => Deno.readLink(at)) };
    }
  }
  return null;
}

/**
 * The `origin` URL of a git checkout, or null, read from its `.git/config` without running git (a
 * checkout's config can make git run commands).
 */
async function originUrl(dir: string): Promise<string | null> {
  const path = join(dir, ".git", "config");
  try {
    if (!(await Deno.lstat(path)).isFile) return null;
    const text = await readBounded(path, { maxBytes: 256 * 1024 });
    let inOrigin = false;
    for (const raw of text.split(/\r?\n/)) {
      const line = raw.trim();
      if (line.startsWith("[")) inOrigin = /^\[remote\s+"origin"\]$/.test(line);
      const url = inOrigin ? /^url\s*=\s*(.+)$/.exec(line) : null;
      if (url) return url[1].trim().replace(/^"(.*)"$/, "$1");
    }
  } catch {
    // Not a checkout, or unreadable: unknown origin.
  }
  return null;
}

// A `.git` folder in it, as ty decides.
async function isCheckout(dir: string): Promise<boolean> {
  return (await Deno.lstat(join(dir, ".git")).catch(() => null))?.isDirectory ?? false;
}

// ty's provenance file, `<plugins-dir>/.sources.json`: install folder name -> where it came from.
// tyhooks reads and writes it in ty's shape so both tools sharing a plugins dir agree. `ref` is a
// tyhooks addition (ty reads past it; a later write by ty drops it).

const SOURCES_FILE = ".sources.json";

/** One install folder's provenance, as ty writes it. */
interface InstalledSource {
  /** ty's catalog id, when ty installed it by id; kept as found. */
  id?: string;
  /** The git URL or local path it came from. */
  source: string;
  /** The folder inside `source` that was copied out (ty's catalog installs); kept as found. */
  subdir?: string;
  /** RFC 3339 time of the last install or update. */
  installed_at?: string;
  /** The branch, tag or commit given with `--ref` (tyhooks). */
  ref?: string;
}

/**
 * The records by install folder. A missing, unreadable or malformed file is an empty map, as in
 * ty: provenance is a convenience, never a precondition.
 */
async function loadSources(pluginsDir: string): Promise<Record<string, InstalledSource>> {
  const path = join(pluginsDir, SOURCES_FILE);
  let text: string;
  try {
    // A FIFO planted there must not hang the call: regular files only.
    if (!(await Deno.lstat(path)).isFile) return {};
    text = await readBounded(path, { maxBytes: 1 << 20 });
  } catch {
    return {};
  }
  try {
    const data = JSON.parse(text);
    if (typeof data !== "object" || data === null || Array.isArray(data)) return {};
    const out: Record<string, InstalledSource> = {};
    for (const [name, value] of Object.entries(data)) {
      if (
        typeof value === "object" && value !== null && typeof (value as InstalledSource).source ===
          "string"
      ) {
        out[name] = value as InstalledSource;
      }
    }
    return out;
  } catch {
    return {};
  }
}

/**
 * Sets (or, with `null`, drops) one folder's record, rewriting the file as ty does: sorted keys,
 * two-space indent, a final newline, written to a temp file and renamed.
 */
async function saveSource(
  pluginsDir: string,
  folder: string,
  record: InstalledSource | null,
): Promise<void> {
  const all = await loadSources(pluginsDir);
  if (record === null) {
    if (!(folder in all)) return;
    delete all[folder];
  } else {
    all[folder] = record;
  }
  // Go's encoding/json writes map keys sorted, and struct fields in declaration order.
  const sorted = Object.fromEntries(
    Object.keys(all).sort().map((k) => [k, ordered(all[k])]),
  );
  const path = join(pluginsDir, SOURCES_FILE);
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(sorted, null, 2) + "\n", {
    createNew: true,
    mode: 0o644,
  });
  try {
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

function ordered(r: InstalledSource): InstalledSource {
  return {
    ...(r.id ? { id: r.id } : {}),
    source: r.source,
    ...(r.subdir ? { subdir: r.subdir } : {}),
    ...(r.installed_at ? { installed_at: r.installed_at } : {}),
    ...(r.ref ? { ref: r.ref } : {}),
  };
}

// `plugins remove NAME` as a library call: delete one plugin's own folder or one install folder,
// and nothing outside the real plugins dir. A symlink in the plugins dir is unlinked, never
// followed; a plugin reached through a symlinked collection is refused.

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
 * Removes what `name` means: a plugin (by name, else by folder name, as `plugins list` shows
 * them) or an install folder. Requires `--allow-read` and `--allow-write`.
 *
 * @throws {RunError} When nothing has that name, or removing it would reach outside the plugins
 * dir through a symlink.
 * @example
 * ```ts
 * import { removePlugin } from "./install.ts";
 * const root = await Deno.makeTempDir();
 * await Deno.mkdir(`${root}/team/one/routines/r`, { recursive: true });
 * await Deno.writeTextFile(`${root}/team/one/plugin.yaml`, "name: one\n");
 * await Deno.writeTextFile(`${root}/team/one/routines/r/prompt.md`, "hi\n");
 * const removed = await removePlugin(root, "one");
 * console.assert(removed.path === `${root}/team/one` && removed.keptFolder === `${root}/team`);
 * ```
 */
export async function removePlugin(pluginsDir: string, name: string): Promise<RemoveResult> {
  const index = await loadPlugins(pluginsDir);
  const target = await findNamed(index, name);
  if (target === null) {
    throw new RunError(
      `No plugin named ${quoted(name)} in ${quoted(index.dir)}`,
      { hint: 'hint: see "tyhooks plugins list"' },
    );
  }
  const root = index.dir;
  const realRoot = await Deno.realPath(root);
  const link = await firstSymlink(root, target.dir);
  if (link !== null && link.path !== target.dir) {
    // Deleting through the link would delete where it points: the attack of issue 12.
    const top = installFolderOf(root, link.path);
    throw new RunError(
      `Refusing to remove ${quoted(name)}: it lies inside ${quoted(link.path)}, a symlink to ${
        quoted(link.target)
      }, outside the plugins dir`,
      {
        hint: link.path === join(root, top)
          ? `hint: remove the symlink itself with "tyhooks plugins remove ${top}"`
          : `hint: remove the symlink ${quoted(link.path)} itself`,
      },
    );
  }
  const top = installFolderOf(root, target.dir);
  const nested = target.dir !== join(root, top);
  if (link !== null) {
    await Deno.remove(target.dir);
  } else {
    const real = await Deno.realPath(target.dir);
    if (
      real === realRoot || !isInside(realRoot, real) ||
      real !== join(realRoot, relative(root, target.dir))
    ) {
      throw new RunError(
        `Refusing to remove ${quoted(target.dir)}: not inside the plugins dir`,
      );
    }
    await Deno.remove(real, { recursive: true });
  }
  if (!nested) await saveSource(realRoot, top, null);
  return {
    path: target.dir,
    unlinked: link !== null,
    keptFolder: nested && (await Deno.lstat(dirname(target.dir)).catch(() => null)) !== null
      ? join(root, top)
      : null,
  };
}
