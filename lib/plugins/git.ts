/**
 * The two git calls of `plugins add`, kept in one small function so they can move onto the
 * project's runner (`lib/process/`) when it lands.
 *
 * @module
 */

import { RunError } from "../errors.ts";

/** Options of {@linkcode runGit}. */
export interface GitOptions {
  /** Kills git when aborted. */
  signal?: AbortSignal;
}

/**
 * Runs `git <args>`, failing with git's own last words. git never prompts: a URL that needs
 * credentials fails instead of hanging. Requires `--allow-run=git`.
 *
 * @param args The arguments after `git`.
 * @param options The abort signal.
 * @throws {RunError} When git cannot start or exits non-zero.
 * @example
 * ```ts
 * import { runGit } from "./git.ts";
 * await runGit(["--version"]);
 * ```
 */
export async function runGit(args: string[], options: GitOptions = {}): Promise<void> {
  // TODO: runner — spawn through lib/process/ (timeout, process group, output cap) once it exists.
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("git", {
      args,
      env: { GIT_TERMINAL_PROMPT: "0" },
      stdin: "null",
      stdout: "piped",
      stderr: "piped",
      signal: options.signal,
    }).output();
  } catch (error) {
    throw new RunError(`Cannot run git: ${(error as Error).message}`, { cause: error });
  }
  if (output.success) return;
  const stderr = new TextDecoder().decode(output.stderr).trim().split("\n").at(-1) ?? "";
  const status = output.signal ? `killed by ${output.signal}` : `exit code ${output.code}`;
  throw new RunError(`git ${args[0]} failed (${status})${stderr ? `: ${stderr}` : ""}`);
}
