/**
 * The git calls of `plugins add` and `update`, through the project's runner: git and whatever it starts
 * (ssh, credential helpers) run in their own process group, bounded by a timeout, and are
 * terminated as a group on SIGINT/SIGTERM.
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { runScript } from "../process/run_script.ts";
import { failureReason } from "../process/record.ts";
import { ALLOWED_PROTOCOLS } from "./install_source.ts";

/** How long a clone or pull may take by default: 5 minutes. */
export const GIT_TIMEOUT_MS = 5 * 60_000;

/** Options of {@linkcode runGit}. */
export interface GitOptions {
  /** Terminates git's process group when aborted. */
  signal?: AbortSignal;
  /** Bound on the git call; default {@linkcode GIT_TIMEOUT_MS}. */
  timeoutMs?: number;
  /** Sees git's stderr as it comes (its progress meter). */
  onProgress?: (chunk: Uint8Array) => void;
}

/**
 * Runs `git <args>`, failing with git's own last words. git never prompts: a URL that needs
 * credentials or an unknown ssh host key fails instead of hanging. Requires `--allow-run`.
 *
 * @param args The arguments after `git`.
 * @param options The abort signal and timeout.
 * @returns What git printed on stdout.
 * @throws {RunError} When git cannot start, times out, or exits non-zero.
 */
export async function runGit(args: string[], options: GitOptions = {}): Promise<string> {
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
  if (result.error === null && !result.timed_out && result.exit_code === 0) return result.stdout;
  // git's "fatal:" line says what went wrong; hints and advice follow it.
  const lines = result.stderr.trim().split("\n");
  const stderr = lines.find((l) => l.startsWith("fatal:")) ?? lines.at(-1) ?? "";
  const command = args[0] === "-C" ? args[2] : args[0];
  throw new RunError(
    `git ${command} failed (${failureReason(result, timeoutMs)})${stderr ? `: ${stderr}` : ""}`,
  );
}

/** Options of {@linkcode cloneShallow}. */
export interface CloneOptions extends GitOptions {
  /** A branch, tag or commit to check out (checked by `checkRef`). */
  ref?: string;
}

/**
 * Clones `url` into `dest` with `--depth 1`, checking out `ref` when given: a branch or tag
 * through `--branch`, else (a commit) by fetching it alone. SOURCE and REF come after `--` or
 * glued to their flag, so neither can be read as an option. Requires `--allow-run`.
 *
 * @param url A URL or path accepted by `parseInstallSource`.
 * @param options The ref, progress callback, abort signal and timeout.
 * @throws {RunError} When git fails.
 */
export async function cloneShallow(
  url: string,
  dest: string,
  options: CloneOptions = {},
): Promise<void> {
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
 * Requires `--allow-run`.
 *
 * @param options The ref, progress callback, abort signal and timeout.
 * @returns The commit it was at before, to roll back to with {@linkcode resetCheckout}.
 * @throws {RunError} When git fails (local changes in the way, history rewritten upstream).
 */
export async function pullCheckout(dir: string, options: CloneOptions = {}): Promise<string> {
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

/**
 * Puts a checkout back at `commit` (a rolled-back update). Requires `--allow-run`.
 *
 * @param commit What {@linkcode pullCheckout} returned.
 * @param options The abort signal and timeout.
 */
export async function resetCheckout(
  dir: string,
  commit: string,
  options: GitOptions = {},
): Promise<void> {
  await runGit(["-C", dir, "reset", "--quiet", "--hard", commit], options);
}
