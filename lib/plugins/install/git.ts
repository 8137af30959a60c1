/**
 * The git side of `plugins add` and `update`, through the one runner (so git's ssh and credential
 * helpers are bounded and ended with it), and telling a repository, a checkout and its origin
 * apart without running git.
 *
 * @module
 */

import { failureReason, runScript, succeeded } from "../../process/run_script.ts";
import { join } from "../../paths.ts";
import { readBounded } from "../../fs.ts";
import { RunError } from "../../errors.ts";
import { ALLOWED_PROTOCOLS } from "./source.ts";

const GIT_TIMEOUT_MS = 5 * 60_000;

/** Options of the git calls. */
export interface GitOptions {
  signal?: AbortSignal;
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
    timeoutMs: GIT_TIMEOUT_MS,
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
  const said = stderr ? `: ${stderr}` : "";
  throw new RunError(`git ${command} failed (${failureReason(result, GIT_TIMEOUT_MS)})${said}`);
}

/**
 * Clones `url` with `--depth 1` at `ref` (a branch or tag, else a commit fetched alone). SOURCE
 * and REF come after `--` or glued to their flag, so neither can be read as an option.
 */
export async function cloneShallow(
  url: string,
  dest: string,
  options: GitOptions = {},
): Promise<void> {
  const progress = options.onProgress ? ["--progress"] : ["--quiet"];
  const clone = (...flags: string[]) =>
    runGit(["clone", "--depth", "1", ...progress, ...flags, "--", url, dest], options);
  const { ref } = options;
  if (ref === undefined) {
    await clone();
    return;
  }
  try {
    await clone(`--branch=${ref}`);
    return;
  } catch (error) {
    // Not a branch or tag: a commit id is fetched alone (servers allow it over protocol v2).
    if (!/^[0-9a-f]{4,64}$/i.test(ref)) throw error;
    await Deno.remove(dest, { recursive: true }).catch(() => {});
  }
  await clone("--no-checkout");
  await runGit(["-C", dest, "fetch", "--quiet", "--depth", "1", "origin", ref], options);
  await runGit(["-C", dest, "checkout", "--quiet", "--detach", "FETCH_HEAD"], options);
}

/**
 * Moves an installed checkout forward in place, as ty does (`git pull --ff-only`), or to `ref`
 * (fetched alone, checked out detached), keeping files the plugin wrote there (logs, state).
 * Returns the commit it was at before, to roll back to.
 */
export async function pullCheckout(dir: string, options: GitOptions = {}): Promise<string> {
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

/** Moves a checkout back to `commit`, as it was before a pull. */
export async function resetCheckout(dir: string, commit: string, options: GitOptions = {}) {
  await runGit(["-C", dir, "reset", "--quiet", "--hard", commit], options);
}

/** A work tree with .git, or a bare repository (HEAD and objects at its top): cloned, as ty does. */
export async function isRepository(path: string): Promise<boolean> {
  const has = async (name: string) =>
    (await Deno.lstat(join(path, name)).catch(() => null)) !== null;
  if (await has(".git")) return true;
  return (await has("HEAD")) && (await has("objects")) && !(await has("plugin.yaml"));
}

/** Is `dir` a checkout? A `.git` folder in it, as ty decides. */
export async function isCheckout(dir: string): Promise<boolean> {
  return (await Deno.lstat(join(dir, ".git")).catch(() => null))?.isDirectory ?? false;
}

/**
 * The `origin` URL of a git checkout, or null, read from its `.git/config` without running git (a
 * checkout's config can make git run commands).
 */
export async function originUrl(dir: string): Promise<string | null> {
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
