/**
 * The decision log: every consulted decision (route, placement, hosts, tool pre), whoever asked
 * (the CLI, the library's Runner, the daemon), as one JSON line appended to
 * `<state>/tyhooks/decisions.log`. Its record, how a decision is appended (one `O_APPEND` write
 * of a whole line, so concurrent writers never interleave; no fsync), the rotation, and the
 * reader `tyhooks log` reads it back with, trusting nothing it finds.
 *
 * @module
 */

import type { Logger } from "./log.ts";
import { stateDir } from "./dirs.ts";
import { dirname, join } from "./path.ts";
import { checkPrivateDir, checkPrivateFile } from "./fs.ts";
import { escapeJsonControl } from "./text.ts";
import {
  type Infer,
  nullable,
  number,
  object,
  orDefault,
  parseJson,
  type Same,
  string,
} from "./wire/json.ts";

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

const encoder = new TextEncoder();

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
    const line = escapeJsonControl(JSON.stringify(toRecord(decision))) + "\n";
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
    ts: new Date().toISOString(),
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
 * Appends `line` (one whole line) to the log at `path` with one write, then rotates the log
 * once it has reached `maxBytes`. The dir is made mode 0700 when missing and must be the user's
 * and writable by nobody else; the log must be a regular file of the user's, mode 0600 (made
 * so, exclusively, when missing). Returns why it could not, or null. Requires `--allow-read`,
 * `--allow-write`, `--allow-sys` (the user id).
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
      const opened = openChecked(path);
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
        rotate(path, info.ino);
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

function openChecked(path: string): Deno.FsFile | string {
  const dir = dirname(path);
  let dirState = checkPrivateDir(dir, "the decision log's dir");
  if (!dirState.ok && dirState.missing) {
    try {
      Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      return `cannot make "${dir}": ${(error as Error).message}`;
    }
    dirState = checkPrivateDir(dir, "the decision log's dir");
  }
  if (!dirState.ok) return dirState.reason;
  return openLog(path);
}

// The log opened for appending, or why not. Missing (its check failed for that), it is created
// exclusively, so nothing planted there is opened; made meanwhile by another writer, it is
// checked again.
function openLog(path: string): Deno.FsFile | string {
  for (let attempt = 0;; attempt++) {
    const unsafe = checkPrivateFile(path, Infinity, "the decision log");
    try {
      if (unsafe === null) return Deno.openSync(path, { append: true });
      return Deno.openSync(path, { append: true, createNew: true, mode: 0o600 });
    } catch (error) {
      if (error instanceof Deno.errors.AlreadyExists && attempt === 0) continue;
      if (error instanceof Deno.errors.AlreadyExists) return unsafe!;
      return `cannot open "${path}": ${(error as Error).message}`;
    }
  }
}

// Only the file this process wrote to: one that another writer has just rotated is left alone,
// so two writers over the bound never push a fresh log over the old one.
function rotate(path: string, ino: number | null): void {
  try {
    if (ino !== null && Deno.lstatSync(path).ino !== ino) return;
    Deno.renameSync(path, `${path}.1`);
  } catch {
    // Another writer rotated it first.
  }
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

// Reading: the log is the user's own file, but whatever is in it is shown only once it reads
// as a record (a line cut by a crash, or edited by hand, is skipped and counted).

const text = orDefault(string(), "");
const decisionRecord = object({
  ts: text,
  event: text,
  agent: text,
  tool: text,
  args: text,
  task_id: orDefault(nullable(number()), null),
  decision: text,
  reason: text,
  plugin: text,
  ms: orDefault(number(), 0),
  pid: orDefault(number(), 0),
});
true satisfies Same<Infer<typeof decisionRecord>, DecisionRecord>;

/** One line of the log read back: the record, or null when the line is not one. */
export function readDecisionLine(line: string): DecisionRecord | null {
  const parsed = parseJson(line);
  if (!parsed.ok) return null;
  const read = decisionRecord.safeParse(parsed.value);
  return read.success ? read.data : null;
}
