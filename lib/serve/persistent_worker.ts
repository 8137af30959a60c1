/**
 * One process of a persistent hook's pool (persistent.ts) and the line protocol spoken with it
 * (lib/README.md, Daemon, "Persistent hooks"). Requests are written without waiting for the
 * previous answer, so one wake-up of a busy script answers many. An answer must echo its request's
 * `id`; any other line puts the process out of step, so no request is ever handed an answer meant
 * for another (a guard's "allow" for a command it would block).
 *
 * @module
 */

import { spawnIsolated, terminateGroup } from "../process/group.ts";
import { openReader } from "../process/run_script.ts";
import { LineReader } from "../process/line_reader.ts";
import { withRequestId } from "../hooks/runner.ts";
import { isRecord } from "../wire/json.ts";
import { escapeJsonControl, quoted } from "../text.ts";

/** How a process ends or gets out of step on its own. */
export type EndReason = "eof" | "overflow" | "junk" | "astray";

/** The tail of a process's stderr kept for the log when it fails. */
const STDERR_TAIL_BYTES = 2048;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** How one request ended. */
export type Outcome =
  | { kind: "answer"; line: string; bytes: number }
  | { kind: "timeout" }
  | { kind: "interrupted" }
  | { kind: "failed"; error: string }
  | { kind: "overflow"; bytes: number }
  | { kind: "exit"; status: Deno.CommandStatus | null; stderr: string }
  /** The process ended before it reached this request: ask again. */
  | { kind: "retry" };

/**
 * A request written to a process: settled once, by its answer, its deadline, its process's end
 * or its caller giving up (the signal). Given up on, it keeps its place in the queue, and its
 * answer, when it comes, is dropped, so the requests behind it still get their own.
 */
export class Pending {
  done = false;
  /** The id its answer must echo, once written to a process. */
  id = "";
  readonly deadline: number;
  #signal: AbortSignal;
  #resolve: (outcome: Outcome) => void;

  constructor(deadline: number, signal: AbortSignal, resolve: (outcome: Outcome) => void) {
    this.deadline = deadline;
    this.#signal = signal;
    this.#resolve = resolve;
    signal.addEventListener("abort", this);
  }

  settle(outcome: Outcome): void {
    if (this.done) return;
    this.done = true;
    this.#signal.removeEventListener("abort", this);
    this.#resolve(outcome);
  }

  handleEvent(): void {
    this.settle({ kind: "interrupted" });
  }
}

/** One running process of a pool. */
export class Worker {
  readonly pid: number;
  readonly startedAt = performance.now();
  readonly exited: Promise<Deno.CommandStatus | null>;
  /** Requests written and not yet answered, oldest first. */
  readonly queue: Pending[] = [];
  /** Notifications not yet written. */
  readonly unwritten: Pending[] = [];
  dead = false;
  /** Requests it answered in step and notifications it took: a process that did was healthy. */
  answered = 0;
  /** Blank lines skipped: named in the warning if the process then times out. */
  blankLines = 0;
  stderrTail = "";
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: LineReader;
  #outbox: string[] = [];
  #writing = false;
  #lastId = 0;

  /** Starts the process; `onEnd` is called once if it ends or gets out of step on its own. */
  constructor(
    script: string,
    options: { cwd?: string; env: Record<string, string>; cap: number; answers: boolean },
    onEnd: (worker: Worker, why: EndReason) => void,
  ) {
    this.#child = spawnIsolated(script, { cwd: options.cwd, env: options.env, stdin: true });
    this.pid = this.#child.pid;
    this.#writer = this.#child.stdin.getWriter();
    this.#writer.closed.catch(() => {});
    this.#lines = new LineReader(this.#child.stdout);
    this.exited = this.#child.status.then((s) => s, () => null);
    // The script's own exit ends its session: a child it left behind holding stdout open would
    // otherwise hide the end (no end of file), and the next request would wait out its timeout.
    void this.exited.then(() => {
      if (!this.dead) void terminateGroup(this.pid, { reaped: this.exited });
    });
    this.#drainStderr();
    this.#readAnswers(options.cap, options.answers, onEnd);
  }

  /** Writes a request line, with an id to echo; a notification is settled once written. */
  send(line: string, pending: Pending, answers: boolean): void {
    if (answers) {
      pending.id = `${++this.#lastId}`;
      this.queue.push(pending);
      this.#outbox.push(withRequestId(line, pending.id));
    } else {
      this.unwritten.push(pending);
      this.#outbox.push(line);
    }
    if (!this.#writing) void this.#flush();
  }

  /** Lines that come while a write is in progress go out together in the next one. */
  async #flush(): Promise<void> {
    this.#writing = true;
    try {
      while (this.#outbox.length > 0) {
        const text = this.#outbox.length === 1 ? this.#outbox[0] : this.#outbox.join("");
        this.#outbox.length = 0;
        // Kept in `unwritten` while being written, where a stuck write's deadline is seen.
        const count = this.unwritten.length;
        await this.#writer.write(encoder.encode(text));
        this.answered += count;
        for (const pending of this.unwritten.splice(0, count)) {
          pending.settle({ kind: "answer", line: "", bytes: 0 });
        }
      }
    } catch {
      // The process is gone: its end is seen on stdout, and its requests fail or retry there;
      // notifications it never got go to the next one.
      this.#outbox.length = 0;
      for (const pending of this.unwritten.splice(0)) pending.settle({ kind: "retry" });
    } finally {
      this.#writing = false;
    }
  }

  /** Ends the process's session: SIGTERM, the grace period, SIGKILL. */
  async kill(graceMs: number): Promise<void> {
    this.dead = true;
    this.#lines.cancel();
    this.#writer.abort().catch(() => {});
    await terminateGroup(this.pid, { graceMs, reaped: this.exited });
    await this.exited;
  }

  /**
   * Hands each answer to the oldest unanswered request when it echoes that request's id (its
   * caller judges the rest of it); any other line puts the process out of step.
   */
  async #readAnswers(
    cap: number,
    answers: boolean,
    onEnd: (worker: Worker, why: EndReason) => void,
  ): Promise<void> {
    while (true) {
      const next = await this.#lines.next(cap);
      if (this.dead) return;
      if (!("line" in next)) return onEnd(this, next.end);
      if (!answers) continue;
      // Too long to be sure whose answer it is: its request fails in `onEnd`.
      if (next.line.length > cap) return onEnd(this, "overflow");
      if (isBlank(next.line)) {
        this.blankLines++;
        continue;
      }
      const line = decoder.decode(next.line);
      const id = answerId(line);
      const pending = this.queue.shift();
      if (pending !== undefined && id === pending.id) {
        this.answered++;
        pending.settle({ kind: "answer", line, bytes: next.line.length });
        continue;
      }
      if (pending !== undefined) {
        pending.settle({ kind: "failed", error: outOfStep(id, pending.id) });
      }
      return onEnd(this, id === undefined ? "junk" : "astray");
    }
  }

  async #drainStderr(): Promise<void> {
    const reader = openReader(this.#child.stderr);
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        this.stderrTail = (this.stderrTail + decoder.decode(value)).slice(-STDERR_TAIL_BYTES);
      }
    } catch {
      // The pipe broke: the process is going.
    }
  }
}

/**
 * The `id` an answer line echoes, whatever its type: null when it has none, undefined if the line
 * is not JSON.
 */
function answerId(line: string): unknown {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  return isRecord(value) && Object.hasOwn(value, "id") ? value.id : null;
}

/** Why an answer line was not the answer to the request `expected`. */
function outOfStep(id: unknown, expected: string): string {
  if (id === undefined) return "Persistent hook answered a line that is not JSON";
  const why = id === null
    ? 'it has no "id"'
    : typeof id === "string"
    ? `its "id" is ${quoted(id)}`
    : `its "id" is ${escapeJsonControl(JSON.stringify(id).slice(0, 60))}, not a string`;
  return `Persistent hook answered out of step: ${why}, the request's is "${expected}" ` +
    `(hint: answer each request once, echoing its "id")`;
}

function isBlank(line: Uint8Array): boolean {
  return line.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0d);
}
