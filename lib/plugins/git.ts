/**
 * The two git calls of `plugins add`, through the project's runner: git and whatever it starts
 * (ssh, credential helpers) run in their own process group, bounded by a timeout, and are
 * terminated as a group on SIGINT/SIGTERM.
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { runScript } from "../process/run_script.ts";
import { failureReason } from "../process/record.ts";

/** How long a clone or pull may take by default: 5 minutes. */
export const GIT_TIMEOUT_MS = 5 * 60_000;

/** Options of {@linkcode runGit}. */
export interface GitOptions {
  /** Terminates git's process group when aborted. */
  signal?: AbortSignal;
  /** Bound on the git call; default {@linkcode GIT_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/**
 * Runs `git <args>`, failing with git's own last words. git never prompts: a URL that needs
 * credentials or an unknown ssh host key fails instead of hanging. Requires `--allow-run`.
 *
 * @param args The arguments after `git`.
 * @param options The abort signal and timeout.
 * @throws {RunError} When git cannot start, times out, or exits non-zero.
 * @example
 * ```ts
 * import { runGit } from "./git.ts";
 * await runGit(["--version"]);
 * ```
 */
export async function runGit(args: string[], options: GitOptions = {}): Promise<void> {
  const timeoutMs = options.timeoutMs ?? GIT_TIMEOUT_MS;
  const result = await runScript("git", {
    args,
    env: {
      GIT_TERMINAL_PROMPT: "0",
      // ssh would otherwise ask about host keys or passwords on the terminal.
      GIT_SSH_COMMAND: Deno.env.get("GIT_SSH_COMMAND") ?? "ssh -o BatchMode=yes",
    },
    timeoutMs,
    signal: options.signal,
  });
  if (result.error === null && !result.timed_out && result.exit_code === 0) return;
  // git's "fatal:" line says what went wrong; hints and advice follow it.
  const lines = result.stderr.trim().split("\n");
  const stderr = lines.find((l) => l.startsWith("fatal:")) ?? lines.at(-1) ?? "";
  throw new RunError(
    `git ${args[0]} failed (${failureReason(result, timeoutMs)})${stderr ? `: ${stderr}` : ""}`,
  );
}
