/**
 * `tyhooks log`: the decision log, filtered, as aligned text or as the JSON lines it stores;
 * `--follow` keeps printing what is appended, as `tail -F` does, across rotations and truncation.
 *
 * @module
 */

import { type CommandContext, type CommandModule, stringOption, UsageError } from "./types.ts";
import { decisionLogOff, decisionLogPath, type DecisionRecord } from "../log.ts";
import { RunError } from "../errors.ts";
import { parseDuration, sleep } from "../async.ts";
import { escapeControl, escapeJsonControl } from "../text.ts";
import { rfc3339 } from "../wire/task.ts";
import {
  type Infer,
  nullable,
  number,
  object,
  orDefault,
  parseJson,
  type Same,
  string,
} from "../wire/json.ts";

/** Read of each file at most: the log rotates at 4 MiB, so only a log written by hand is cut. */
const MAX_READ_BYTES = 8 * 1024 * 1024;

/** A line longer than this is no record tyhooks wrote: skipped, and never held whole. */
const MAX_LINE_CHARS = 64 * 1024;

/** How often `--follow` looks for new lines. */
const FOLLOW_POLL_MS = 200;

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

export const spec: CommandModule["spec"] = {
  summary: "Print the decision log: every consulted decision (route, place, hosts, tool pre), " +
    "oldest first, one aligned line each.",
  options: {
    follow: {
      type: "boolean",
      short: "f",
      help:
        "keep printing decisions as they are made, until SIGINT, SIGTERM, SIGHUP or SIGQUIT (exit 0)",
    },
    event: { type: "string", value: "E", help: "only decisions about event E, e.g. task.route" },
    decision: {
      type: "string",
      value: "D",
      help: "only decisions D, e.g. block, ask, allow, hold, local",
    },
    since: {
      type: "string",
      value: "T",
      help: "only decisions of the last T (90s, 15m, 1h, 2d), or since a time (2026-12-01T09:00)",
    },
    lines: { type: "string", short: "n", value: "N", help: "only the last N decisions" },
    json: {
      type: "boolean",
      help: 'print the lines as stored: {"ts","event","agent","tool","args","task_id",...}',
    },
  },
  handlesSignals: true,
  details: [
    "The log is <state>/tyhooks/decisions.log (<state>: $XDG_STATE_HOME, else",
    "$HOME/.local/state), with the older decisions.log.1 beside it once it has reached 4 MiB;",
    "TYHOOKS_DECISION_LOG=off stops adding to it. Columns: time (local), event, decision, who",
    "decided (plugins; -: tyhooks itself), the tool or task, and the reason, cut; control",
    "characters are shown escaped. A line that is not a decision is skipped and counted. Exit 0.",
  ].join("\n"),
};

/** Which records are shown. */
interface Filter {
  event?: string;
  decision?: string;
  /** Epoch ms: records before it are left out. */
  since?: number;
}

export async function run(ctx: CommandContext): Promise<number> {
  const path = decisionLogPath();
  const filter: Filter = {
    event: stringOption(ctx.values, "event"),
    decision: stringOption(ctx.values, "decision"),
    since: sinceOption(stringOption(ctx.values, "since")),
  };
  const last = countOption(stringOption(ctx.values, "lines"));
  const json = ctx.values.json === true;
  const follow = ctx.values.follow === true;

  const older = await LineReader.open(`${path}.1`);
  const current = await LineReader.open(path);
  const lines = [...await older?.readLines() ?? [], ...await current?.readLines() ?? []];
  older?.close();
  let skipped = (older?.skipped ?? 0) + (current?.skipped ?? 0);
  let shown = lines.flatMap((line) => {
    const record = readDecisionLine(line);
    if (record === null) skipped++;
    return record !== null && matches(record, filter) ? [{ line, record }] : [];
  });
  if (last !== undefined) shown = last === 0 ? [] : shown.slice(-last);

  const out = new Output(json);
  await ctx.print(out.lines(shown));
  if (skipped > 0) {
    ctx.log.log("warn", `Skipped ${skipped} line(s) of the decision log that are not decisions`, {
      log: path,
    });
  }
  if (shown.length === 0) {
    const why = current === null && older === null ? "No decisions" : "No matching decisions";
    ctx.log.log("info", why, {
      log: path,
      ...(decisionLogOff() ? { off: "TYHOOKS_DECISION_LOG=off" } : {}),
    });
  }
  if (follow) await followLog(ctx, { path, reader: current, filter, out });
  else current?.close();
  return 0;
}

/** Appended lines, as they come, until SIGINT/SIGTERM; a rotated log is read to its end first. */
async function followLog(
  ctx: CommandContext,
  state: { path: string; reader: LineReader | null; filter: Filter; out: Output },
): Promise<void> {
  let { reader } = state;
  const show = async (lines: string[]) => {
    const records = lines.flatMap((line) => {
      const record = readDecisionLine(line);
      return record !== null && matches(record, state.filter) ? [{ line, record }] : [];
    });
    if (records.length > 0) await ctx.print(state.out.lines(records));
  };
  try {
    while (await sleep(FOLLOW_POLL_MS, ctx.signal)) {
      if (reader !== null) await show(await reader.readLines());
      const now = inode(state.path);
      if (now === reader?.ino || now === undefined) continue;
      // Rotated (or made): the old file is read to its end (the writer that rotated it wrote its
      // line first), then the new one from its start.
      const next = await LineReader.open(state.path, { fromStart: true });
      if (next === null) continue;
      if (reader !== null) await show(await reader.readLines());
      reader?.close();
      reader = next;
      await show(await reader.readLines());
    }
  } finally {
    reader?.close();
  }
}

function inode(path: string): number | null | undefined {
  try {
    return Deno.lstatSync(path).ino;
  } catch {
    return undefined;
  }
}

function matches(record: DecisionRecord, filter: Filter): boolean {
  if (filter.event !== undefined && record.event !== filter.event) return false;
  if (filter.decision !== undefined && record.decision !== filter.decision) return false;
  if (filter.since !== undefined && !(Date.parse(record.ts) >= filter.since)) return false;
  return true;
}

const HOUR_MS = 3_600_000;

function sinceOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  // Hours and days too: a log is looked back on in those.
  const long = /^\s*(\d+(?:\.\d+)?)\s*(h|d)\s*$/.exec(text);
  const ago = long
    ? Number(long[1]) * (long[2] === "h" ? HOUR_MS : 24 * HOUR_MS)
    : parseDuration(text);
  if (ago !== undefined && ago > 0) return Date.now() - ago;
  const at = /^\d{4}-\d\d-\d\d/.test(text) ? Date.parse(text) : NaN;
  if (Number.isFinite(at)) return at;
  throw new UsageError(
    `Invalid value "${text}" for flag "--since"`,
    "hint: a duration (90s, 15m, 1h, 2d) or a time (2026-12-01T09:00)",
  );
}

function countOption(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (/^\d+$/.test(text.trim()) && Number.isSafeInteger(Number(text))) return Number(text);
  throw new UsageError(
    `Invalid value "${text}" for flag "--lines"`,
    "hint: a whole number, e.g. -n 20",
  );
}

// Fixed widths, so that lines printed while following line up with those before them.
const COLUMNS: [name: string, width: number][] = [
  ["TIME", 19],
  ["EVENT", 14],
  ["DECISION", 16],
  ["BY", 16],
  ["TOOL/TASK", 16],
  ["REASON", 100],
];

/** The lines printed, and whether the text header has been printed yet. */
class Output {
  #json: boolean;
  #header = false;
  constructor(json: boolean) {
    this.#json = json;
  }

  lines(shown: { line: string; record: DecisionRecord }[]): string {
    if (this.#json) return shown.map(({ line }) => escapeJsonControl(line) + "\n").join("");
    if (shown.length === 0) return "";
    const rows = shown.map(({ record }) => textRow(record));
    if (!this.#header) rows.unshift(COLUMNS.map(([name]) => name));
    this.#header = true;
    return rows.map((row) =>
      row.map((cell, i) => {
        const width = COLUMNS[i][1];
        const fitted = cell.length > width ? `${cell.slice(0, width - 1)}…` : cell;
        return i === row.length - 1 ? fitted : fitted.padEnd(width);
      }).join("  ").trimEnd() + "\n"
    ).join("");
  }
}

function textRow(record: DecisionRecord): string[] {
  const what = record.tool || (record.task_id === null ? "" : `task ${record.task_id}`);
  const date = new Date(record.ts);
  // `2026-12-01 09:00:00`, in local time.
  const time = Number.isNaN(date.getTime())
    ? record.ts
    : rfc3339(date).slice(0, 19).replace("T", " ");
  const { event, decision, plugin, reason } = record;
  return [time, event, decision, plugin || "-", what, reason].map(escapeControl);
}

/**
 * The lines of one log file, read in chunks: a file larger than {@linkcode MAX_READ_BYTES} is
 * read from that far before its end, and a line past {@linkcode MAX_LINE_CHARS} is dropped
 * (counted in `skipped`) without ever being held whole. Kept open, it reads what is appended.
 */
class LineReader {
  readonly ino: number | null;
  skipped = 0;
  #file: Deno.FsFile;
  #decoder = new TextDecoder();
  #partial = "";
  #dropping: boolean;

  private constructor(file: Deno.FsFile, ino: number | null, midLine: boolean) {
    this.#file = file;
    this.ino = ino;
    this.#dropping = midLine;
  }

  /** Opens the log at `path` (null when none); a `RunError` for a FIFO or any non-regular file. */
  static async open(
    path: string,
    options: { fromStart?: boolean } = {},
  ): Promise<LineReader | null> {
    let info: Deno.FileInfo;
    let file: Deno.FsFile;
    try {
      info = await Deno.lstat(path);
      if (!info.isFile) {
        throw new RunError(`Cannot read the decision log "${path}": it is not a regular file`, {
          hint: `hint: move it away: mv "${path}" "${path}.bad"`,
        });
      }
      file = await Deno.open(path, { read: true });
    } catch (error) {
      if (error instanceof RunError) throw error;
      if (error instanceof Deno.errors.NotFound) return null;
      throw new RunError(`Cannot read the decision log "${path}": ${(error as Error).message}`);
    }
    const skip = options.fromStart ? 0 : Math.max(0, info.size - MAX_READ_BYTES);
    if (skip > 0) await file.seek(skip, Deno.SeekMode.Start);
    return new LineReader(file, info.ino, skip > 0);
  }

  /**
   * The whole lines up to the file's end now; a last line without its newline waits. A file now
   * shorter than what was read of it was truncated in place: it is read from its start again.
   */
  async readLines(): Promise<string[]> {
    const lines: string[] = [];
    if (this.#file.statSync().size < await this.#file.seek(0, Deno.SeekMode.Current)) {
      await this.#file.seek(0, Deno.SeekMode.Start);
      this.#decoder = new TextDecoder();
      this.#partial = "";
      this.#dropping = false;
    }
    const buffer = new Uint8Array(64 * 1024);
    for (;;) {
      const n = await this.#file.read(buffer);
      if (n === null || n === 0) break;
      this.#take(this.#decoder.decode(buffer.subarray(0, n), { stream: true }), lines);
    }
    return lines;
  }

  #take(chunk: string, lines: string[]): void {
    let text = chunk;
    if (this.#dropping) {
      const end = text.indexOf("\n");
      if (end === -1) return;
      this.#dropping = false;
      text = text.slice(end + 1);
    }
    const parts = (this.#partial + text).split("\n");
    this.#partial = parts.pop()!;
    for (const line of parts) {
      if (line.length > MAX_LINE_CHARS) this.skipped++;
      else if (line.trim() !== "") lines.push(line);
    }
    if (this.#partial.length > MAX_LINE_CHARS) {
      this.skipped++;
      this.#partial = "";
      this.#dropping = true;
    }
  }

  close(): void {
    try {
      this.#file.close();
    } catch {
      // Already closed.
    }
  }
}
