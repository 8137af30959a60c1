/**
 * Asking one host for its facts: its probe through the runner (timeout, group kill, output cap),
 * then the answer checked against the probe schema. Every failure becomes a short reason a person
 * can read in a log line or in the placement answer.
 *
 * @module
 */

import type { HostEntry } from "./hosts_file.ts";
import type { HostFacts } from "./probe_schema.ts";
import { runScript } from "../process/run_script.ts";
import { failureReason, type RunResult } from "../process/record.ts";

/** A probe answer is one small JSON object; anything bigger is not one. */
export const PROBE_OUTPUT_CAP = 64 * 1024;

/**
 * What asking one host gave.
 */
export interface HostOutcome {
  /** The host asked. */
  host: HostEntry;
  /** The facts, or null when the host was dropped. */
  facts: HostFacts | null;
  /** Why the host was dropped (`timed out after 3000 ms`, `exited 255: ...`), else null. */
  reason: string | null;
  /** The probe's pid (its process-group id); null when it did not start. */
  pid: number | null;
  /** Wall time of the probe. */
  duration_ms: number;
}

/** Options of {@linkcode askHost}. */
export interface AskOptions {
  /** Bound on the probe. */
  timeoutMs: number;
  /** The bound a timeout reason names (pick-host's whole deadline); default `timeoutMs`. */
  deadlineMs?: number;
  /** SIGTERM-to-SIGKILL grace of a probe past its timeout. */
  graceMs: number;
  /** Working directory of the probe. */
  cwd?: string;
  /** Aborting it terminates the probe at once. */
  signal?: AbortSignal;
}

/**
 * Runs `host`'s probe and validates its answer.
 *
 * Requires `--allow-run` and `--allow-read`.
 *
 * @param options Timeout, grace, cwd, abort signal.
 * @returns The outcome: facts, or why not. Never rejects for the host's sake.
 */
export async function askHost(host: HostEntry, options: AskOptions): Promise<HostOutcome> {
  const [program, ...args] = host.probe;
  const result = await runScript(program, {
    args,
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
    graceMs: options.graceMs,
    maxOutputBytes: PROBE_OUTPUT_CAP,
    signal: options.signal,
  });
  const outcome = { host, pid: result.pid, duration_ms: result.duration_ms };
  let reason: string | null = null;
  if (failed(result)) {
    reason = sshFailure(result, options.deadlineMs ?? options.timeoutMs);
    // The host answered, but has no tyhooks where its ssh commands look.
    if (result.exit_code === 127 && host.probe.slice(-2).join(" ") === "tyhooks probe") {
      reason += ` (hint: tyhooks hosts sync ${host.name})`;
    }
  } else if (result.stdout_truncated) {
    reason = `printed more than ${PROBE_OUTPUT_CAP / 1024} KiB`;
  }
  if (reason !== null) return { ...outcome, facts: null, reason };
  const checked = await check(result.stdout);
  return typeof checked === "string"
    ? { ...outcome, facts: null, reason: checked }
    : { ...outcome, facts: checked, reason: null };
}

/** True when the run did not exit 0. */
export function failed(result: RunResult): boolean {
  return result.error !== null || result.timed_out || result.exit_code !== 0;
}

/**
 * Why a run over ssh failed: the runner's reason, then the last stderr line, where ssh says why
 * (`exited 255: ssh: connect to host gpu-3 port 22: Connection refused`).
 *
 * @param timeoutMs The bound a timeout reason names.
 */
export function sshFailure(result: RunResult, timeoutMs: number): string {
  const reason = failureReason(result, timeoutMs);
  const last = result.stderr.trim().split("\n").pop()?.trim();
  return result.error === null && last ? `${reason}: ${clip(last)}` : reason;
}

async function check(stdout: string): Promise<HostFacts | string> {
  const text = stdout.trim();
  if (text === "") return "printed nothing";
  const value = decode(text);
  if (value === undefined) return `printed garbage: ${clip(JSON.stringify(text))}`;
  const { HostFactsSchema } = await import("./probe_schema.ts");
  const parsed = HostFactsSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const [issue, ...more] = parsed.error.issues;
  const field = issue.path.join(".") || "(answer)";
  const rest = more.length ? ` (and ${more.length} more)` : "";
  // zod words a missing field as a type mismatch with undefined; say it plainly.
  const what = issue.message.endsWith("received undefined") ? "missing" : issue.message;
  return `wrong probe answer: "${field}": ${what}${rest}`;
}

// The whole output, else its last line: a login shell's rc file may print before the answer.
function decode(text: string): unknown {
  for (const candidate of [text, text.slice(text.lastIndexOf("\n") + 1)]) {
    try {
      return JSON.parse(candidate);
    } catch {
      // Try the next.
    }
  }
  return undefined;
}

function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
