/**
 * The run record: what every script run yields, success or not.
 *
 * @module
 */

/** One script run, as `--json` prints it (field names are the wire names). */
export interface RunRecord {
  /** The plugin the script belongs to; null for a legacy hook or a bare script. */
  plugin: string | null;
  /** The script (or command) that was run. */
  script: string;
  /** Its pid, which is also its process-group id; null when it could not start. */
  pid: number | null;
  /** Exit code; null when it was killed by a signal or could not start. */
  exit_code: number | null;
  /** The signal that ended it (`SIGTERM`, `SIGKILL`), or null. */
  signal: string | null;
  /** True when it ran past its timeout and was terminated. */
  timed_out: boolean;
  /** Wall time of the whole call, including the output drain and cleanup. */
  duration_ms: number;
  /** Bytes the script wrote to stdout (captured or dropped). */
  stdout_bytes: number;
  /** Bytes the script wrote to stderr (captured or dropped). */
  stderr_bytes: number;
  /** True when stdout went past the cap and the rest was dropped. */
  stdout_truncated: boolean;
  /** True when stderr went past the cap and the rest was dropped. */
  stderr_truncated: boolean;
  /** Why it could not start (or was interrupted), else null. */
  error: string | null;
}

/** A run record plus the captured output (decoded as UTF-8, up to the cap). */
export interface RunResult extends RunRecord {
  /** Captured stdout, up to the cap. */
  stdout: string;
  /** Captured stderr, up to the cap. */
  stderr: string;
  /** The captured bytes as written (binary-safe), when the run asked for them with `raw`. */
  raw?: { stdout: Uint8Array; stderr: Uint8Array };
}

/**
 * True when the run started, exited 0, and was neither killed nor timed out.
 *
 * @returns Whether the run succeeded.
 */
export function succeeded(record: Pick<RunRecord, "exit_code" | "error" | "timed_out">): boolean {
  return record.exit_code === 0 && record.error === null && !record.timed_out;
}

/**
 * A one-line reason why a run did not succeed, for logs: `timed out after 5000 ms`,
 * `exited 1`, `killed by SIGKILL`, or the start error.
 *
 * @param timeoutMs The timeout it ran under, to say how long it waited.
 * @returns The reason, or `ok`.
 */
export function failureReason(
  record: Pick<RunRecord, "exit_code" | "signal" | "error" | "timed_out">,
  timeoutMs?: number,
): string {
  if (record.error !== null) return record.error;
  if (record.timed_out) {
    return timeoutMs === undefined ? "timed out" : `timed out after ${timeoutMs} ms`;
  }
  if (record.signal !== null) return `killed by ${record.signal}`;
  if (record.exit_code !== 0) return `exited ${record.exit_code}`;
  return "ok";
}

/** A run that has not started (nothing yet to say), to be filled in. */
export function blankResult(script: string, plugin: string | null): RunResult {
  return {
    plugin,
    script,
    pid: null,
    exit_code: null,
    signal: null,
    timed_out: false,
    duration_ms: 0,
    stdout_bytes: 0,
    stderr_bytes: 0,
    stdout_truncated: false,
    stderr_truncated: false,
    error: null,
    stdout: "",
    stderr: "",
  };
}

/** The record without the captured output, for logs and `--json` listings. */
export function toRecord(result: RunResult): RunRecord {
  const { stdout: _stdout, stderr: _stderr, raw: _raw, ...record } = result;
  return record;
}
