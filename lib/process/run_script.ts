/**
 * The one runner every script goes through (lib/README.md, "How every script runs") and its run
 * record: isolated spawn (group.ts), output read with bounded memory, timeout, group kill and
 * cleanup, all torn down by one AbortController per run. The call returns within timeout + grace
 * + 100 ms whatever the script does, so a read can be abandoned at any time: a pipe held open by
 * an escaped descendant must not hold the call.
 *
 * @module
 */

import {
  DEFAULT_GRACE_MS,
  execFormatProblem,
  groupAlive,
  interpreterProblem,
  SETSID_EXEC_FAILURE,
  signalGroup,
  spawnIsolated,
  terminateGroup,
  terminateStrays,
  waitGroupEmpty,
  withoutNul,
} from "./group.ts";
import { checkDuration, clearableTimeout, within } from "../async.ts";
import { concat } from "../fs.ts";

/** Default cap of captured output per stream. */
export const DEFAULT_MAX_OUTPUT = 1024 * 1024;
/** How long output is drained after the script exits (or is killed). */
export const DRAIN_MS = 100;

/**
 * What a run waits for once the script has exited: `"consult"` (someone waits for the answer),
 * a 100 ms drain, then its group is ended; `"notify"`, until the group is empty too, so background
 * work (`curl … &`) finishes within the timeout.
 */
export type RunMode = "consult" | "notify";

/** Options of {@linkcode runScript}. */
export interface RunOptions {
  /** Arguments after the script. */
  args?: string[];
  /** Working directory; default the current one. */
  cwd?: string;
  /** Variables added to the inherited environment (NUL bytes removed, values cut to 64 KiB). */
  env?: Record<string, string>;
  /**
   * Written to stdin, which is then closed; a stream is piped through as it comes (`plugins run`
   * passes its own stdin on); without it stdin is /dev/null.
   */
  stdin?: string | Uint8Array | ReadableStream<Uint8Array>;
  /** Bound on the script's run; default 30 s. */
  timeoutMs?: number;
  /** SIGTERM-to-SIGKILL grace; default 500 ms. */
  graceMs?: number;
  /** Captured bytes per stream; default 1 MiB. */
  maxOutputBytes?: number;
  /** Aborting it terminates the run's group at once (tyhooks got SIGINT/SIGTERM). */
  signal?: AbortSignal;
  /** The plugin, for the record. */
  plugin?: string | null;
  /** Also keep the captured bytes as written (`result.raw`), for output passed on verbatim. */
  raw?: boolean;
  /** What the run waits for after the script exits; default `"consult"`. */
  mode?: RunMode;
  /**
   * After the run, also end what it left in its session outside its group with its pipes closed
   * (`set -m; job >/dev/null 2>&1 &`): a scan of every process (a few ms), for actions, not hooks.
   */
  sweepSession?: boolean;
  /**
   * Sees every output chunk as it is read, before the cap (valid only during the call, or until
   * the promise it returns settles: the next read waits for it, never past the end of the run).
   */
  onOutput?: (stream: "stdout" | "stderr", chunk: Uint8Array) => void | Promise<void>;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const TIMEOUT = Symbol("timeout");

/**
 * Longest environment value passed on, in UTF-8 bytes. Linux refuses to exec with any single
 * `KEY=VALUE` string over 128 KiB (E2BIG), so one huge task title would make every hook
 * unstartable; the whole task is on stdin for hooks that need it.
 */
export const MAX_ENV_VALUE_BYTES = 64 * 1024;

function clean(env: Record<string, string> | undefined): Record<string, string> | undefined {
  if (env === undefined) return undefined;
  // NUL bytes out first, so that a cut value is 64 KiB of what the script gets.
  return Object.fromEntries(Object.entries(withoutNul(env)).map(([k, v]) => [k, capValue(v)]));
}

let capBuffer: Uint8Array | undefined;

function capValue(value: string): string {
  // A UTF-16 unit is at most 3 UTF-8 bytes: short values skip the encoding.
  if (value.length * 3 <= MAX_ENV_VALUE_BYTES) return value;
  capBuffer ??= new Uint8Array(MAX_ENV_VALUE_BYTES);
  // encodeInto stops before a character that does not fit whole: no character is split.
  const { read } = encoder.encodeInto(value, capBuffer);
  return read === value.length ? value : value.slice(0, read);
}

// The groups of runs not yet ended. A process that exits while one is still being ended (a call
// past its deadline, an interrupted one) would leave a hook that ignores SIGTERM running through
// its grace and beyond: at exit, what is left of them gets SIGKILL.
const unended = new Set<number>();
globalThis.addEventListener("unload", () => {
  for (const pgid of unended) signalGroup(pgid, "SIGKILL");
});

/**
 * Runs `script` in its own process group and returns its record and output. Never throws for
 * the script's sake: a script that cannot start yields a record with `error` set.
 *
 * Requires `--allow-run` (and `--allow-read` for the executable check).
 *
 * @example
 * ```ts
 * import { runScript } from "./run_script.ts";
 * const result = await runScript("sh", { args: ["-c", "echo hi; exit 3"], timeoutMs: 5000 });
 * console.assert(result.stdout === "hi\n" && result.exit_code === 3);
 * ```
 */
export async function runScript(script: string, options: RunOptions = {}): Promise<RunResult> {
  const started = performance.now();
  const result = blankResult(script, options.plugin ?? null);
  const finish = () => {
    result.duration_ms = Math.round(performance.now() - started);
    return result;
  };
  if (options.signal?.aborted) {
    result.error = "Not started: interrupted";
    return finish();
  }
  checkDuration(options.timeoutMs ?? 0, "timeoutMs");
  checkDuration(options.graceMs ?? 0, "graceMs");

  // From the spawn to watching the caller's signal, nothing awaits: an abort meanwhile is seen.
  const child = spawn(script, options);
  if (child instanceof Error) {
    result.error = `Cannot start "${script}": ${(await whyUnrunnable(script)) ?? child.message}`;
    return finish();
  }
  result.pid = child.pid;
  unended.add(child.pid);
  const run = watchRun(options.timeoutMs ?? 30_000, options.signal);
  const pipes = openPipes(child, options);
  let status: Deno.CommandStatus | undefined;
  const exited = child.status.then((s) => status = s);
  try {
    const cut = await settle(child.pid, { exited, run, pipes, options });
    // settle returns once the group is gone or ended: only a process exiting meanwhile keeps it.
    unended.delete(child.pid);
    result.timed_out = cut === TIMEOUT;
    if (cut === INTERRUPTED) result.error = "Interrupted";
  } finally {
    run.release();
    // Pipes still held by escaped descendants are abandoned, never waited on.
    pipes.abandon();
  }

  if (status !== undefined) {
    result.exit_code = status.signal === null ? status.code : null;
    result.signal = status.signal;
  }
  const [out, err] = await pipes.output;
  fill(result, "stdout", out);
  fill(result, "stderr", err);
  if (options.raw) result.raw = { stdout: out.bytes, stderr: err.bytes };
  await checkStarted(result, script);
  return finish();
}

/** Starts `script` in its own group; the error when it cannot. */
function spawn(script: string, options: RunOptions): Deno.ChildProcess | Error {
  try {
    return spawnIsolated(script, {
      args: options.args,
      cwd: options.cwd,
      env: clean(options.env),
      stdin: options.stdin !== undefined,
    });
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

const INTERRUPTED = Symbol("interrupted");

/**
 * One run's abort: the timeout and the caller's signal both abort it, and its abort is the only
 * thing that starts the kill.
 */
interface RunAbort {
  signal: AbortSignal;
  /** Resolves at the abort. */
  aborted: Promise<void>;
  /** Clears the timer and stops listening to the caller's signal. */
  release(): void;
}

function watchRun(timeoutMs: number, outer: AbortSignal | undefined): RunAbort {
  const run = new AbortController();
  // Not setTimeout, which costs a CLI call about 5 ms on first use, and not AbortSignal.timeout,
  // which a daemon would carry until it fires (see lib/async.ts).
  const timeout = clearableTimeout(timeoutMs);
  timeout.signal.addEventListener("abort", () => run.abort(TIMEOUT), { once: true });
  const onOuterAbort = () => run.abort(outer?.reason);
  outer?.addEventListener("abort", onOuterAbort, { once: true });
  const aborted = new Promise<void>((resolve) =>
    run.signal.addEventListener("abort", () => resolve(), { once: true })
  );
  return {
    signal: run.signal,
    aborted,
    release() {
      timeout.clear();
      outer?.removeEventListener("abort", onOuterAbort);
    },
  };
}

/** The child's pipes: both outputs read under the cap, stdin fed in the background. */
interface Pipes {
  output: Promise<[Captured, Captured]>;
  /** True once both outputs have ended. */
  ended(): boolean;
  abandon(): void;
}

function openPipes(child: Deno.ChildProcess, options: RunOptions): Pipes {
  const cap = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const onOutput = options.onOutput;
  const stdout = capture(child.stdout, cap, onOutput && ((c) => onOutput("stdout", c)));
  const stderr = capture(child.stderr, cap, onOutput && ((c) => onOutput("stderr", c)));
  const output = Promise.all([stdout.done, stderr.done]);
  let ended = false;
  output.then(() => ended = true);
  const stdin = options.stdin === undefined ? undefined : writeStdin(child, options.stdin);
  return {
    output,
    ended: () => ended,
    abandon() {
      stdout.abandon();
      stderr.abandon();
      stdin?.abandon();
    },
  };
}

/**
 * Waits for the script to exit (in `"notify"` mode, for its group to empty too) or the run to be
 * aborted, then leaves nothing of its group behind: what cut the run short, else null.
 */
async function settle(
  pid: number,
  { exited, run, pipes, options }: {
    exited: Promise<unknown>;
    run: RunAbort;
    pipes: Pipes;
    options: RunOptions;
  },
): Promise<typeof TIMEOUT | typeof INTERRUPTED | null> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  await Promise.race([exited, run.aborted]);
  if (!run.signal.aborted && options.mode === "notify") {
    // Its background work runs on until the group is empty or the timeout ends it. Pipes still
    // open then are held by something outside the group: drained briefly, then abandoned.
    // The common case (nothing left) answered by one probe, without the poll loop's awaits.
    if (!groupAlive(pid) || await waitGroupEmpty(pid, Infinity, { signal: run.signal })) {
      if (!pipes.ended()) await within(Promise.race([pipes.output, run.aborted]), DRAIN_MS);
    }
  }
  if (run.signal.aborted) {
    await terminateGroup(pid, { graceMs, reaped: exited });
    await within(exited, DRAIN_MS / 2);
    await within(pipes.output, DRAIN_MS / 2);
    return run.signal.reason === TIMEOUT ? TIMEOUT : INTERRUPTED;
  }
  if (options.mode !== "notify") {
    // Exited: give its output a short drain, then end whatever it left in its group. Usually
    // both pipes have ended by now; skipping the drain timer then is measurably cheaper.
    if (!pipes.ended()) await within(Promise.race([pipes.output, run.aborted]), DRAIN_MS);
    if (groupAlive(pid)) await terminateGroup(pid, { graceMs, reaped: exited });
  }
  // Pipes still open with the group gone: held by a child that left the group but not the
  // session (SPEC: only a deliberate setsid escapes), which is ended too; so is one that let go
  // of the pipes, where the caller pays for the scan.
  if (!run.signal.aborted && (!pipes.ended() || options.sweepSession) && !groupAlive(pid)) {
    await terminateStrays(pid, graceMs);
  }
  return null;
}

/**
 * Turns setsid(1)'s 126/127 for a script it could not exec (missing, not executable, bad
 * interpreter) into a start failure. Checked only after the run, so the common path pays no
 * extra stat.
 */
async function checkStarted(result: RunResult, script: string): Promise<void> {
  if (result.error !== null || (result.exit_code !== 126 && result.exit_code !== 127)) return;
  const failure = SETSID_EXEC_FAILURE.exec(result.stderr);
  if (!failure) return;
  // It never ran: no pid, no exit code of its own (126/127 were setsid's).
  result.pid = null;
  result.exit_code = null;
  // What the isolator said, less its own name and the script's path, which the message has.
  const said = failure[0].replace(/^setsid: failed to execute .*?: (?=[^:]*$)/, "");
  result.error = `Cannot start "${script}": ${(await whyUnrunnable(script)) ?? said}`;
}

/**
 * Why `script` looks unrunnable, checked after a start failure so the common causes get a clear
 * message rather than the isolator's exit code; a name without a slash is PATH's business.
 */
async function whyUnrunnable(script: string): Promise<string | null> {
  if (!script.includes("/")) return null;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(script);
  } catch (error) {
    return error instanceof Deno.errors.NotFound ? "no such file" : (error as Error).message;
  }
  if (!info.isFile) return "not a regular file";
  if (info.mode !== null && (info.mode & 0o111) === 0) {
    return `not executable (hint: chmod +x "${script}")`;
  }
  if (execFormatProblem(script) === "crlf") {
    return `its "#!" line ends in a carriage return (CRLF line ends), ` +
      `which the system reads as part of the interpreter's name ` +
      `(hint: dos2unix "${script}", or sed -i 's/\\r$//' "${script}")`;
  }
  const interpreter = await interpreterProblem(script);
  if (interpreter !== null) {
    return `${interpreter} (hint: install it, or name one that exists, such as ` +
      `"#!/usr/bin/env python3")`;
  }
  return null;
}

function fill(result: RunResult, stream: "stdout" | "stderr", got: Captured): void {
  result[stream] = decoder.decode(got.bytes);
  result[`${stream}_bytes`] = got.total;
  result[`${stream}_truncated`] = got.truncated;
}

// The payload is written in the background: a script that never reads its stdin must not hold
// the call, and one that exits early must not make the write throw.
function writeStdin(
  child: Deno.ChildProcess,
  payload: string | Uint8Array | ReadableStream<Uint8Array>,
): { abandon(): void } {
  if (payload instanceof ReadableStream) {
    const stop = new AbortController();
    payload.pipeTo(child.stdin, { signal: stop.signal }).catch(() => {});
    return { abandon: () => stop.abort() };
  }
  const writer = child.stdin.getWriter();
  const bytes = typeof payload === "string" ? encoder.encode(payload) : payload;
  let written = false;
  writer.write(bytes).then(() => writer.close()).then(() => written = true, () => {});
  return {
    abandon() {
      // Usually written and closed long before: aborting then would only cost a rejection.
      if (!written) writer.abort().catch(() => {});
    },
  };
}

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

/** True when the run started, exited 0, and was neither killed nor timed out. */
export function succeeded(record: Pick<RunRecord, "exit_code" | "error" | "timed_out">): boolean {
  return record.exit_code === 0 && record.error === null && !record.timed_out;
}

/**
 * Why a run did not succeed, for logs (`timed out after 5000 ms` given `timeoutMs`, `exited 1`,
 * `killed by SIGKILL`, the start error), or `ok`.
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

/**
 * Why `record`'s stdout is no whole answer: it went past the output cap, and what was kept ends
 * mid-answer (a guard's rewrite of a large file, say). Null when stdout is whole.
 */
export function cutAnswer(
  record: Pick<RunRecord, "stdout_truncated" | "stdout_bytes">,
): string | null {
  return record.stdout_truncated
    ? `its answer of ${record.stdout_bytes} bytes is over the output cap, so only its start was kept`
    : null;
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

// Reading a child's output.

/** What was read from one stream. */
export interface Captured {
  /** The first `cap` bytes. */
  bytes: Uint8Array;
  /** Every byte seen, kept or dropped. */
  total: number;
  /** True when bytes were dropped. */
  truncated: boolean;
}

/** A capture in progress. */
export interface Capture {
  /** Resolves when the stream ends or is abandoned. */
  done: Promise<Captured>;
  /** Stops reading and releases the pipe; `done` then resolves with what was read. */
  abandon(): void;
}

/**
 * Reads `stream` to its end, keeping `cap` bytes. `onChunk` sees each chunk, valid until it returns
 * or its promise settles, which holds the next read back (the script waits on its pipe, not
 * tyhooks' event loop); once it throws it is called no more.
 */
export function capture(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  onChunk?: (chunk: Uint8Array) => void | Promise<void>,
): Capture {
  const reader = openReader(stream);
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let total = 0;
  const abandoned = Promise.withResolvers<void>();
  let live = onChunk;
  // Before the buffer is reused: live output (plugins run, git's progress) sees every byte.
  const pass = async (value: Uint8Array) => {
    try {
      const pending = live?.(value);
      if (pending !== undefined) await Promise.race([pending, abandoned.promise]);
    } catch {
      live = undefined; // Its reader went away (a closed pipe): the rest is only captured.
    }
  };
  const done = (async () => {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.length;
        if (live !== undefined) await pass(value);
        if (kept < cap) {
          // A copy: the reader reuses its buffer for the next read.
          const part = value.slice(0, Math.min(value.length, cap - kept));
          chunks.push(part);
          kept += part.length;
        }
      }
    } catch {
      // Cancelled (abandoned) or the pipe broke: keep what was read.
    }
    return { bytes: concat(chunks, kept), total, truncated: total > kept };
  })();
  return {
    done,
    abandon() {
      live = undefined;
      abandoned.resolve();
      reader.cancel().catch(() => {});
    },
  };
}

/** The first read's buffer: most hooks print a line or two. */
const FIRST_READ_BYTES = 4 * 1024;
/** Reads grow to this while they keep filling their buffer. */
const MAX_READ_BYTES = 64 * 1024;

/** A reader whose chunks are only valid until the next `read()`. */
export interface ChunkReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(): Promise<void>;
}

/**
 * Reads a child's pipe into one reused buffer that grows while reads fill it: the default reader
 * allocates a fresh 64 KiB buffer per read, outside the JS heap, and under a daemon's load that
 * garbage alone doubled its memory.
 */
export function openReader(stream: ReadableStream<Uint8Array>): ChunkReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    return stream.getReader();
  }
  let buffer = new Uint8Array(FIRST_READ_BYTES);
  return {
    async read() {
      const result = await byob.read(buffer);
      if (result.value !== undefined) {
        const full = result.value.length === result.value.buffer.byteLength;
        // The read took the buffer over (transferred it); its memory is reused from here on.
        buffer = full && result.value.length < MAX_READ_BYTES
          ? new Uint8Array(result.value.length * 2)
          : new Uint8Array(result.value.buffer);
      }
      return result as ReadableStreamReadResult<Uint8Array>;
    },
    cancel: () => byob.cancel(),
  };
}
