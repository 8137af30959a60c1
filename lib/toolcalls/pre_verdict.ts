/**
 * What one `pre_tool_call` run means: allow, block, or a failure the failure policy decides.
 *
 * @module
 */

import { failureReason, type RunResult } from "../process/record.ts";
import { readPreAnswer } from "./pre_answer.ts";

/**
 * The meaning of one pre hook's run.
 *
 * @example
 * ```ts
 * import { judgePreRun, type PreOutcome } from "./pre_verdict.ts";
 * import { runScript } from "../process/run_script.ts";
 * const outcome: PreOutcome = await judgePreRun(await runScript("/bin/false"), 1000);
 * console.assert(outcome.kind === "failure" && outcome.reason === "exited 1");
 * ```
 */
export type PreOutcome =
  | { kind: "allow" | "block"; reason: string }
  | { kind: "failure"; reason: string };

/**
 * Exit code by which a pre hook blocks, its stderr being the reason.
 *
 * @example
 * ```ts
 * import { BLOCK_EXIT_CODE, judgePreRun } from "./pre_verdict.ts";
 * import { runScript } from "../process/run_script.ts";
 * const run = await runScript("sh", { args: ["-c", `echo no >&2; exit ${BLOCK_EXIT_CODE}`] });
 * console.assert((await judgePreRun(run, 1000)).kind === "block");
 * ```
 */
export const BLOCK_EXIT_CODE = 2;

/**
 * Reads a pre hook's run: exit 0 with empty stdout allows; exit 0 with a JSON answer says allow
 * or block; exit 2 blocks with stderr (trimmed) as the reason; anything else (start failure,
 * timeout, signal, another exit code, malformed JSON, unknown action) is a failure.
 *
 * @param result The run.
 * @param timeoutMs The timeout it ran under, for the failure reason.
 * @returns The outcome; `reason` may be empty for allow and block.
 * @example
 * ```ts
 * import { judgePreRun } from "./pre_verdict.ts";
 * const run = { exit_code: 2, signal: null, error: null, timed_out: false, stdout: "", stderr: "no\n" };
 * const outcome = await judgePreRun(run as never, 1000);
 * console.assert(outcome.kind === "block" && outcome.reason === "no");
 * ```
 */
export async function judgePreRun(result: RunResult, timeoutMs: number): Promise<PreOutcome> {
  if (result.error === null && !result.timed_out && result.exit_code === BLOCK_EXIT_CODE) {
    return { kind: "block", reason: result.stderr.trim() };
  }
  if (result.error !== null || result.timed_out || result.exit_code !== 0) {
    return { kind: "failure", reason: failureReason(result, timeoutMs) };
  }
  if (result.stdout.trim() === "") return { kind: "allow", reason: "" };
  const parsed = await readPreAnswer(result.stdout);
  if (!parsed.ok) return { kind: "failure", reason: parsed.error };
  return { kind: parsed.answer.action, reason: parsed.answer.reason };
}
