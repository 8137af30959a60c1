/**
 * Logging to stderr, as text or as one JSON object a line, through one asynchronous writer that
 * a stalled reader (a paused terminal, a full pipe) never holds back. Stdout is never touched: it
 * carries only a command's answer.
 *
 * @module
 */

import { within } from "./async.ts";
import { escapeControl, jsonText } from "./text.ts";
import { join, stateDir } from "./paths.ts";
import { concat, openPrivateLog, rotateLog } from "./fs.ts";

/** A log level. */
export type LogLevel = "debug" | "info" | "warn" | "error";
/** Log levels, lowest first. */
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];
/** Structured fields attached to a log line: `key=value` pairs in text, keys in JSON. */
export type LogFields = Record<string, unknown>;

/** Where library code reports what happened; the CLI passes one that writes to stderr. */
export interface Logger {
  /** Logs at `level` unless it is below the logger's threshold. */
  log(level: LogLevel, message: string, fields?: LogFields): void;
}

/** Options of {@linkcode createLogger}. */
export interface LoggerOptions {
  /** `text` (default) or `json`. */
  format?: "text" | "json";
  /** Lowest level written; default `info`. */
  level?: LogLevel;
  /** Where lines go; default stderr, through {@linkcode stderrWriter}. */
  write?: (line: string) => void;
}

const encoder = new TextEncoder();

/**
 * Most bytes waiting for stderr: 16 pipe buffers, so a reader paused for seconds loses nothing of
 * a chatty service, while one that never comes back costs this much, and a relayed line fits.
 */
export const STDERR_BOUND_BYTES = 1024 * 1024;
/**
 * How long {@linkcode QueuedWriter.flush} waits on a write that makes no progress: a reader that
 * keeps up writes a pipe's worth in far less, one that is stalled would hold the exit forever.
 */
export const FLUSH_IDLE_MS = 500;
const DROPPED = "Dropped output: stderr was not read fast enough";
// One write takes at most this much of the queue: a few syscalls for a burst of short lines.
const BATCH_BYTES = 64 * 1024;

/** Options of {@linkcode QueuedWriter}. */
export interface QueuedWriterOptions {
  /** Most bytes waiting; default {@linkcode STDERR_BOUND_BYTES}. */
  maxBytes?: number;
  /** Writes some of `bytes` and resolves to how many; default `Deno.stderr.write`. */
  write?: (bytes: Uint8Array) => Promise<number>;
}

interface Queued {
  bytes: Uint8Array;
  /** Lines it holds, for the drop count; 0 for the drop notice itself. */
  lines: number;
}

/**
 * Text for a stream, written in order and asynchronously, so whoever writes never waits on the
 * reader. Past `maxBytes` waiting, texts are dropped and counted, and a notice takes their place
 * once it can write again. A reader gone for good (a broken pipe) ends the writing.
 */
export class QueuedWriter {
  /** The line saying that `count` lines were dropped. */
  note: (count: number) => string = (count) =>
    `tyhooks: warn: ${DROPPED} (dropped_lines=${count})\n`;
  #max: number;
  #write: (bytes: Uint8Array) => Promise<number>;
  #queue: Queued[] = [];
  #bytes = 0;
  #dropped = 0;
  #running = false;
  #closed = false;
  #progress: { promise: Promise<void>; resolve: () => void } | null = null;

  constructor(options: QueuedWriterOptions = {}) {
    this.#max = options.maxBytes ?? STDERR_BOUND_BYTES;
    this.#write = options.write ?? ((bytes) => Deno.stderr.write(bytes));
  }

  /** Queues `text`, or drops and counts it when the queue is full; never waits, never throws. */
  write(text: string): void {
    if (this.#closed) return;
    const bytes = encoder.encode(text);
    if (this.#bytes + bytes.length > this.#max) {
      this.#dropped += lineCount(text);
      return;
    }
    if (this.#dropped > 0) this.#noteDropped();
    this.#push({ bytes, lines: lineCount(text) });
    this.#start();
  }

  /** Waits until all queued (and reported) is written; false once `idleMs` pass with no progress. */
  async flush(idleMs: number = FLUSH_IDLE_MS): Promise<boolean> {
    if (this.#dropped > 0 && !this.#closed) {
      this.#noteDropped();
      this.#start();
    }
    while (this.#running) {
      this.#progress ??= Promise.withResolvers<void>();
      if (!await within(this.#progress.promise, idleMs)) return false;
    }
    return this.#dropped === 0 && !this.#closed;
  }

  #push(entry: Queued): void {
    this.#queue.push(entry);
    this.#bytes += entry.bytes.length;
  }

  #noteDropped(): void {
    // Where the dropped lines were: after everything queued before them.
    this.#push({ bytes: encoder.encode(this.note(this.#dropped)), lines: 0 });
    this.#dropped = 0;
  }

  #start(): void {
    if (this.#running) return;
    this.#running = true;
    void this.#pump();
  }

  async #pump(): Promise<void> {
    let failed = false;
    while (!this.#closed) {
      if (this.#queue.length === 0) {
        // A notice only after a write went through: one that fails would be dropped in turn.
        if (this.#dropped === 0 || failed) break;
        this.#noteDropped();
      }
      const batch = this.#take();
      try {
        for (let at = 0; at < batch.bytes.length;) {
          at += await this.#write(batch.bytes.subarray(at));
          this.#progressed();
        }
        failed = false;
      } catch (error) {
        failed = true;
        this.#dropped += batch.lines;
        // Nobody will read again: drop everything from now on, at no cost.
        if (error instanceof Deno.errors.BrokenPipe || error instanceof Deno.errors.BadResource) {
          this.#closed = true;
        }
      }
      this.#bytes -= batch.bytes.length;
    }
    if (this.#closed) this.#queue = [];
    this.#running = false;
    this.#progressed();
  }

  // The first queued texts, up to BATCH_BYTES (or the first alone when it is bigger), as one.
  #take(): Queued {
    let count = 0;
    let size = 0;
    let lines = 0;
    for (const entry of this.#queue) {
      if (count > 0 && size + entry.bytes.length > BATCH_BYTES) break;
      count++;
      size += entry.bytes.length;
      lines += entry.lines;
    }
    const taken = this.#queue.splice(0, count);
    return { bytes: concat(taken.map((entry) => entry.bytes), size), lines };
  }

  #progressed(): void {
    this.#progress?.resolve();
    this.#progress = null;
  }
}

function lineCount(text: string): number {
  let count = 0;
  for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1)) count++;
  return Math.max(1, count);
}

/**
 * The one writer for tyhooks' stderr: logs, relayed service lines and the CLI's messages all go
 * through it, so they stay in order. `main.ts` flushes it before exiting.
 */
export const stderrWriter: QueuedWriter = new QueuedWriter();

/**
 * A logger writing to stderr, as text or JSON lines, from a threshold level up.
 *
 * @example
 * ```ts
 * import { createLogger } from "./log.ts";
 * const lines: string[] = [];
 * const log = createLogger({ format: "json", write: (l) => lines.push(l) });
 * log.log("warn", "Router failed", { plugin: "r" });
 * log.log("debug", "Not written: below the default threshold");
 * console.assert(lines.length === 1 && JSON.parse(lines[0]).plugin === "r");
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? "text";
  const threshold = LOG_LEVELS.indexOf(options.level ?? "info");
  const write = options.write ?? toStderr(format);
  return {
    log(level, message, fields = {}) {
      if (LOG_LEVELS.indexOf(level) >= threshold) {
        write(formatLine(format, { level, message, fields }));
      }
    },
  };
}

// Lines for stderrWriter, whose notice of dropped lines then reads like the rest of the log (a
// JSON log stays parseable).
function toStderr(format: "text" | "json"): (line: string) => void {
  stderrWriter.note = (count) =>
    formatLine(format, { level: "warn", message: DROPPED, fields: { dropped_lines: count } });
  return (line) => stderrWriter.write(line);
}

function formatLine(
  format: "text" | "json",
  { level, message, fields }: { level: LogLevel; message: string; fields: LogFields },
): string {
  if (format === "json") {
    return JSON.stringify({ time: isoTime(Date.now()), level, msg: message, ...fields }) +
      "\n";
  }
  const details = Object.entries(fields)
    .filter(([, v]) => v !== undefined)
    .map(([k, v]) => `${escapeControl(k)}=${textValue(v)}`)
    .join(" ");
  return `tyhooks: ${level}: ${escapeControl(message)}${details ? ` (${details})` : ""}\n`;
}

// A field value in a text line: bare when it is one word, else quoted as JSON quotes it; control
// characters as \xNN either way.
function textValue(value: unknown): string {
  if (typeof value === "string") {
    const escaped = escapeControl(value);
    return /\s|"/.test(escaped) ? `"${escaped.replace(/["\\]/g, "\\$&")}"` : escaped;
  }
  const json = JSON.stringify(value) ?? String(value);
  // JSON already escapes C0 (as \u001b): write those as \x1b too, and escape what it leaves (C1).
  return escapeControl(json.replace(/\\u00([01][0-9a-f]|7f)/g, "\\x$1"));
}

/** A logger that drops everything; the library default. */
export const silentLogger: Logger = { log() {} };

/**
 * Counts one kind of trouble and warns at most once a second, each line with the count so far
 * (`total`) and since the line before (`since_last`); with `trailing`, what a burst counted after
 * its last line is logged a second later, or by `flush()`.
 */
export class RateLog {
  #count = 0;
  #logged = 0;
  #last = -Infinity;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #log: Logger;
  #message: string;
  #trailing: boolean;

  constructor(log: Logger, message: string, options: { trailing?: boolean } = {}) {
    this.#log = log;
    this.#message = message;
    this.#trailing = options.trailing ?? false;
  }

  /** How many were counted. */
  get count(): number {
    return this.#count;
  }

  /** Counts one, and warns `message` with `fields` unless a line went out within the second. */
  note(fields: LogFields, message: string = this.#message): void {
    this.#count++;
    if (performance.now() - this.#last >= 1000) return this.#line(message, fields);
    if (this.#trailing) this.#timer ??= setTimeout(() => this.flush(), 1000);
  }

  /** Logs the trailing message now, when something was counted since the last line. */
  flush(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#trailing && this.#count > this.#logged) this.#line(this.#message, {});
  }

  #line(message: string, fields: LogFields): void {
    this.#last = performance.now();
    const since = this.#count - this.#logged;
    this.#logged = this.#count;
    this.#log.log("warn", message, { ...fields, total: this.#count, since_last: since });
  }
}

// The decision log (README, "Decision log"): one `O_APPEND` write of a whole JSON line per
// decision, so concurrent writers never interleave; no fsync. Here, as every decision writes it.

/** One line of the decision log. */
export interface DecisionRecord {
  /** When the decision was made: ISO 8601, UTC, with milliseconds. */
  ts: string;
  /** The consulted event, e.g. `task.route`, `pre_tool_call`. */
  event: string;
  /** The agent (or platform) that asked about a tool call; `""` for task questions. */
  agent: string;
  /** The tool asked about; `""` for task questions. */
  tool: string;
  /** The tool's arguments as JSON text, cut to 1 KiB; `""` for task questions. */
  args: string;
  /** The task asked about; null for tool calls. */
  task_id: number | null;
  /**
   * What was decided: `allow`, `block` or `ask` for a tool call; `hold`, the profile dir or
   * `none` for a route; the target or `local` for a placement; the hosts (`a,b`) or `none`.
   */
  decision: string;
  /** Why, as the deciding hook (or tyhooks) said it; cut to 1 KiB. */
  reason: string;
  /** Who decided: the plugin (or the explicit script); several comma-separated; `""`: tyhooks. */
  plugin: string;
  /** How long deciding took, in ms. */
  ms: number;
  /** The deciding process. */
  pid: number;
}

/** A decision as the call that made it knows it; the rest of the record is filled in here. */
export interface Decision {
  event: string;
  agent?: string;
  tool?: string;
  /** The tool's arguments, any JSON value (only its first KiB is ever serialised). */
  args?: unknown;
  task_id?: number | null;
  decision: string;
  reason: string;
  plugin: string;
  /** When the call started, on the `performance.now()` clock. */
  startedAt: number;
}

/** Past this size the log is moved to `decisions.log.1` (replacing it) and started afresh. */
export const MAX_DECISION_LOG_BYTES = 4 * 1024 * 1024;

/** Each text field of a record is cut to this many bytes of UTF-8. */
export const MAX_FIELD_BYTES = 1024;

/** `TYHOOKS_DECISION_LOG=off` turns the log off. */
export function decisionLogOff(): boolean {
  return Deno.env.get("TYHOOKS_DECISION_LOG") === "off";
}

/** The log's path: `<state>/tyhooks/decisions.log`. Requires `--allow-env`. */
export function decisionLogPath(): string {
  return join(stateDir(), "tyhooks", "decisions.log");
}

// One warning per process: a daemon that cannot write its log says so once, not per decision.
let warned = false;

/**
 * Appends `decision` to the log unless it is off. Never throws and never waits: a log that
 * cannot be written is one warning on `log` (once per process), and the decision stands.
 */
export function recordDecision(decision: Decision, log: Logger): void {
  if (decisionLogOff()) return;
  let problem: string | null;
  try {
    const line = jsonText(toRecord(decision));
    problem = appendDecisionLine(decisionLogPath(), line);
  } catch (error) {
    problem = (error as Error).message;
  }
  if (problem === null || warned) return;
  warned = true;
  log.log("warn", `Cannot write the decision log: ${problem}`, {
    hint: "fix the state dir, or TYHOOKS_DECISION_LOG=off",
  });
}

function toRecord(decision: Decision): DecisionRecord {
  return {
    ts: isoTime(Date.now()),
    event: decision.event,
    agent: cut(decision.agent ?? ""),
    tool: cut(decision.tool ?? ""),
    args: decision.args === undefined ? "" : cut(jsonPrefix(decision.args, MAX_FIELD_BYTES)),
    task_id: decision.task_id ?? null,
    decision: cut(decision.decision),
    reason: cut(decision.reason),
    plugin: cut(decision.plugin),
    ms: Math.round((performance.now() - decision.startedAt) * 10) / 10,
    pid: Deno.pid,
  };
}

/**
 * Appends `line` to a private log in one write, rotating it at `maxBytes`; why it could not, or
 * null. Requires `--allow-read`, `--allow-write`, `--allow-sys` (the user id).
 */
export function appendDecisionLine(
  path: string,
  line: string,
  maxBytes: number = MAX_DECISION_LOG_BYTES,
): string | null {
  const bytes = encoder.encode(line);
  for (let attempt = 0;; attempt++) {
    if (held?.path !== path) release();
    if (held === null) {
      const opened = openPrivateLog(path, "the decision log");
      if (typeof opened === "string") return opened;
      held = { path, file: opened };
    }
    try {
      // One write: O_APPEND places a regular file's write whole at its end.
      const written = held.file.writeSync(bytes);
      const info = held.file.statSync();
      if (written < bytes.length) {
        release();
        return `wrote ${written} of ${bytes.length} bytes to "${path}"`;
      }
      if (info.size >= maxBytes) {
        rotateLog(path, info.ino);
        release();
      } else if (info.nlink === 0) {
        // Removed while held: the line went nowhere, so it goes to a new log.
        release();
        if (attempt === 0) continue;
      }
      return null;
    } catch (error) {
      release();
      return `cannot write "${path}": ${(error as Error).message}`;
    }
  }
}

// A daemon records decision after decision: the log stays open between them (an open, two lstat
// calls and a close less each time) while it is the file at its path. A file at the bound is
// let go once written to: this writer or another one has just moved it to `.1`.
let held: { path: string; file: Deno.FsFile } | null = null;

function release(): void {
  try {
    held?.file.close();
  } catch {
    // Already closed.
  }
  held = null;
}

/**
 * `new Date(ms).toISOString()`, written out: the first `toISOString` of a process costs about
 * 0.6 ms, a third of a warm call's decision log write.
 */
export function isoTime(ms: number): string {
  const days = Math.floor(ms / 86_400_000);
  const time = ms - days * 86_400_000;
  // Days since 1970-01-01 to a Gregorian date, counted in 400-year eras from 0000-03-01.
  const shifted = days + 719_468;
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor(
    (dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) -
      Math.floor(dayOfEra / 146_096)) / 365,
  );
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) -
    Math.floor(yearOfEra / 100));
  const m = Math.floor((5 * dayOfYear + 2) / 153);
  const month = m < 10 ? m + 3 : m - 9;
  const year = era * 400 + yearOfEra + (month <= 2 ? 1 : 0);
  const day = dayOfYear - Math.floor((153 * m + 2) / 5) + 1;
  const two = (n: number) => String(n).padStart(2, "0");
  return `${String(year).padStart(4, "0")}-${two(month)}-${two(day)}T` +
    `${two(Math.floor(time / 3_600_000))}:${two(Math.floor(time / 60_000) % 60)}:` +
    `${two(Math.floor(time / 1000) % 60)}.${String(time % 1000).padStart(3, "0")}Z`;
}

/** `text` cut to `maxBytes` of UTF-8 (never inside a character), `…` marking the cut. */
export function cut(text: string, maxBytes: number = MAX_FIELD_BYTES): string {
  if (text.length * 3 <= maxBytes) return text;
  // At most maxBytes characters can fit: a 1 MiB reason is never encoded whole.
  const head = text.slice(0, maxBytes + 1);
  const buffer = new Uint8Array(maxBytes);
  if (encoder.encodeInto(head, buffer).read === text.length) return text;
  const { read } = encoder.encodeInto(head, buffer.subarray(0, maxBytes - 3));
  return `${head.slice(0, read)}…`;
}

/**
 * The start of `value`'s JSON text: at least `budget` characters of it when it is longer (then
 * cut), built without serialising the rest, so a tool call carrying a 60 MiB file costs what its
 * first KiB does. `value` is a JSON value (what a request was parsed into).
 */
export function jsonPrefix(value: unknown, budget: number): string {
  let out = "";
  const walk = (v: unknown): void => {
    if (typeof v === "string") {
      out += JSON.stringify(v.length > budget ? v.slice(0, budget) : v);
    } else if (Array.isArray(v)) {
      out += "[";
      for (let i = 0; i < v.length && out.length <= budget; i++) {
        if (i > 0) out += ",";
        walk(v[i]);
      }
      out += "]";
    } else if (v !== null && typeof v === "object") {
      out += "{";
      let first = true;
      for (const [key, item] of Object.entries(v)) {
        if (out.length > budget) break;
        if (item === undefined) continue;
        out += `${first ? "" : ","}${JSON.stringify(key.slice(0, budget))}:`;
        first = false;
        walk(item);
      }
      out += "}";
    } else {
      out += JSON.stringify(v) ?? "null";
    }
  };
  walk(value);
  return out;
}
