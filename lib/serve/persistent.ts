/**
 * Persistent hooks (`persistent: true` under the manifest's `tyhooks:` key), the daemon's answer
 * to a spawn per decision, after git's long-running filter process protocol: the script is
 * started once, in its own session as every script is, and then gets one request per line on its
 * stdin and answers each with one JSON line on its stdout. Each hook has a pool of up to
 * `max_procs` such processes (default 1).
 *
 * Requests to a busy process are written without waiting for the previous answer (the script
 * reads them as a loop reads lines), so on a busy daemon one wake-up of the script answers many
 * requests. Each request line carries an `"id"` (its first key, unique per process) and the
 * answer must echo it: the answers come in order, and one whose `id` is missing or is not the
 * oldest unanswered request's (a second answer to one request, a debug print, a banner) puts the
 * process out of step. That request fails, the process is restarted and the requests behind it
 * are asked again, so no request is ever handed an answer meant for another (a guard's "allow"
 * for a command it would block). A blank line (`print(answer + "\n")`) is no answer and is
 * skipped. Notification lines carry no id, and what their process prints is ignored.
 *
 * Every guarantee of a one-shot run holds per request: it is bounded by the hook's timeout (time
 * spent waiting for a free process included); a process whose oldest unanswered request is past
 * its timeout has its whole session killed, and the requests behind it are asked again. A crash
 * ends a process the same way; an answer line longer than the output cap, or not JSON, fails that
 * request (a guard then follows its failure policy) and restarts the process. The first restart
 * is immediate; the next ones, while no process has answered, wait the services' backoff, and
 * meanwhile the hook's requests are answered by one-shot runs of its script, so a guard keeps
 * deciding within its timeout. A script that exits is ended at once with its session, so a child
 * it left holding stdout open cannot hide the exit.
 *
 * Processes hold no slot of `--max-procs`: the pool is their bound. A reload retires the previous
 * index's pools (requests in flight are answered, then the processes are ended) and `close()`
 * ends them at stop.
 *
 * @module
 */

import type { AskHandler, AskRequest } from "../consult/consult.ts";
import { eventSpec, mayBePersistent } from "../events.ts";
import type { Plugin } from "../plugins/types.ts";
import { DEFAULT_MAX_PROCS, hookSettings } from "../plugins/hook_settings.ts";
import {
  blankResult,
  DEFAULT_MAX_OUTPUT,
  openReader,
  type RunResult,
} from "../process/run_script.ts";
import { DEFAULT_GRACE_MS, spawnIsolated, terminateGroup } from "../process/group.ts";
import { LineReader } from "../process/line_reader.ts";
import { pluginEnv, withRequestId } from "../hooks/runner.ts";
import { type BackoffOptions, DEFAULT_BACKOFF, nextStep, NO_STREAK } from "../services/backoff.ts";
import { onTimeout, sleep } from "../async.ts";
import { type Logger, silentLogger } from "../log.ts";

/** How a process ends or gets out of step on its own. */
type EndReason = "eof" | "overflow" | "junk" | "astray";

/** The tail of a process's stderr kept for the log when it fails. */
const STDERR_TAIL_BYTES = 2048;

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Options of {@linkcode PersistentHooks}. */
export interface PersistentOptions {
  log?: Logger;
  /** Longest answer line, in bytes; default 1 MiB (the output cap). */
  maxOutputBytes?: number;
  /** Restart delays; default the services' (1 s doubling to 30 s). */
  backoff?: BackoffOptions;
}

/** How one request ended. */
type Outcome =
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
class Pending {
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
class Worker {
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

  /**
   * Starts the process. `onEnd` is called once if it ends or gets out of step on its own
   * (not when {@linkcode kill}ed).
   */
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

  /**
   * Writes `line` (a request ending in a newline), with an id for an answer to echo.
   * `pending` gets its answer line, or, for a notification (`answers` false), an empty answer
   * once the line is written.
   */
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

/** The pool of one persistent hook. */
class HookPool {
  #plugin: Plugin;
  #event: string;
  #script: string;
  #maxProcs: number;
  /** A notification hook: its lines get no answer. */
  #notifies: boolean;
  #options: Required<PersistentOptions>;
  #workers: Worker[] = [];
  #streak = NO_STREAK;
  /** The next restart is the streak's first: it is not delayed. */
  #fresh = true;
  #restartAt = 0;
  #inFlight = 0;
  #drained: PromiseWithResolvers<void> | null = null;
  #kills = new Set<Promise<void>>();
  // One timer for the pool, at the earliest deadline of a request written, not one per request.
  #timer: { clear(): void } | null = null;
  #timerAt = Infinity;
  closing = false;

  constructor(plugin: Plugin, event: string, options: Required<PersistentOptions>) {
    this.#plugin = plugin;
    this.#event = event;
    this.#script = plugin.hooks[event];
    this.#maxProcs = Math.max(1, hookSettings(plugin, event).maxProcs ?? DEFAULT_MAX_PROCS);
    // Consulted hooks answer one JSON line per request; notified ones are only told.
    this.#notifies = eventSpec(event).kind === "notified";
    this.#options = options;
  }

  /** Asks a process of the pool, or, while the pool waits to restart one, runs `once`. */
  async ask(
    request: AskRequest,
    once: (request: AskRequest) => Promise<RunResult>,
  ): Promise<RunResult> {
    const started = performance.now();
    const deadline = started + request.timeoutMs;
    this.#inFlight++;
    try {
      for (let now = started;; now = performance.now()) {
        const picked = this.#pick(request, deadline, now);
        if (picked === ONCE) {
          return await once({ ...request, timeoutMs: Math.ceil(deadline - now) });
        }
        if (!(picked instanceof Worker)) return this.#result(started, null, picked);
        const worker = picked;
        const outcome = await new Promise<Outcome>((resolve) => {
          const pending = new Pending(deadline, request.signal, resolve);
          worker.send(request.stdin ?? "{}\n", pending, !this.#notifies);
          if (deadline < this.#timerAt) this.#arm(deadline);
        });
        if (outcome.kind === "retry" && !this.closing) continue;
        return this.#result(started, worker.pid, outcome);
      }
    } finally {
      if (--this.#inFlight === 0) this.#drained?.resolve();
    }
  }

  /** Stops taking requests; once those in flight are answered, ends the processes. */
  async retire(): Promise<void> {
    this.closing = true;
    if (this.#inFlight > 0) {
      this.#drained ??= Promise.withResolvers();
      await this.#drained.promise;
    }
    await this.close();
  }

  /** Ends every process now; requests still waiting on one are interrupted. */
  async close(): Promise<void> {
    this.closing = true;
    this.#timer?.clear();
    this.#timer = null;
    const workers = this.#workers.splice(0);
    for (const worker of workers) {
      worker.dead = true;
      for (const pending of worker.queue.splice(0)) pending.settle({ kind: "interrupted" });
    }
    await Promise.all([
      ...workers.map((worker) => worker.kill(DEFAULT_GRACE_MS)),
      ...this.#kills,
    ]);
  }

  #result(started: number, pid: number | null, outcome: Outcome): RunResult {
    const result = blankResult(this.#script, this.#plugin.name);
    result.pid = pid;
    result.duration_ms = Math.round(performance.now() - started);
    switch (outcome.kind) {
      case "timeout":
        result.timed_out = true;
        break;
      case "interrupted":
      case "retry":
        result.error = "Interrupted";
        break;
      case "failed":
        result.error = outcome.error;
        break;
      case "overflow":
        result.stdout_bytes = outcome.bytes;
        result.stdout_truncated = true;
        result.error =
          `Persistent hook answered a line longer than ${this.#options.maxOutputBytes} bytes`;
        break;
      case "exit": {
        const status = outcome.status;
        const how = status === null
          ? "ended"
          : status.signal !== null
          ? `was killed by ${status.signal}`
          : `exited ${status.code}`;
        result.stderr = outcome.stderr;
        result.error = `Persistent hook ${how} before answering`;
        break;
      }
      case "answer":
        result.stdout = outcome.line;
        result.stdout_bytes = outcome.bytes;
        result.exit_code = 0;
    }
    return result;
  }

  /**
   * The process to ask: an idle one, else a new one while the pool has room (and is not backing
   * off), else the least loaded (the request waits behind its queue), else, while the pool backs
   * off with no process, a one-shot run; or why there is none.
   */
  #pick(request: AskRequest, deadline: number, now: number): Worker | Outcome | typeof ONCE {
    if (request.signal.aborted || this.closing) return INTERRUPTED;
    if (deadline <= now) return { kind: "timeout" };
    let best: Worker | undefined;
    for (const worker of this.#workers) {
      if (best === undefined || worker.queue.length < best.queue.length) best = worker;
    }
    if (best !== undefined && best.queue.length === 0) return best;
    if (this.#workers.length >= this.#maxProcs) return best!;
    if (this.#restartAt <= now) return this.#start(request);
    return best ?? ONCE;
  }

  #start(request: AskRequest): Worker | Outcome {
    let worker: Worker;
    try {
      worker = new Worker(this.#script, {
        cwd: this.#plugin.dir,
        env: { ...request.env, ...pluginEnv(this.#plugin), TASK_EVENT: this.#event },
        cap: this.#options.maxOutputBytes,
        answers: !this.#notifies,
      }, (w, why) => void this.#end(w, why));
    } catch (error) {
      this.#backoff(null);
      return {
        kind: "failed",
        error: `Cannot start "${this.#script}": ${(error as Error).message}`,
      };
    }
    this.#workers.push(worker);
    this.#options.log.log("debug", "Started a persistent hook", {
      plugin: this.#plugin.name,
      event: this.#event,
      pid: worker.pid,
    });
    return worker;
  }

  #arm(at: number): void {
    this.#timer?.clear();
    this.#timerAt = at;
    this.#timer = onTimeout(Math.max(0, at - performance.now()), () => this.#expire());
  }

  /**
   * Fails the requests past their deadline. A process whose oldest unanswered request is past
   * it (even one its caller gave up on) is stuck on it and is ended; so is one that has not read
   * a notification for a whole timeout.
   */
  #expire(): void {
    this.#timer = null;
    this.#timerAt = Infinity;
    // Timers and performance.now() can disagree by a fraction of a millisecond.
    const now = performance.now() + 1;
    let next = Infinity;
    for (const worker of [...this.#workers]) {
      let stuck = false;
      worker.queue.forEach((pending, i) => {
        if (pending.done && i > 0) return;
        if (pending.deadline > now) next = Math.min(next, pending.deadline);
        else if (i === 0) stuck = true;
        else pending.settle({ kind: "timeout" });
      });
      for (const pending of worker.unwritten) {
        if (pending.deadline > now) next = Math.min(next, pending.deadline);
        else {
          stuck = true;
          pending.settle({ kind: "timeout" });
        }
      }
      if (stuck) void this.#end(worker, "timeout");
    }
    if (next < Infinity) this.#arm(next);
  }

  /**
   * A process timed out, ended, or got out of step: it is ended (its session terminated), its
   * current request fails, the requests behind it are asked again, and the next process starts
   * when `#backoff` says (at once, or after a delay).
   */
  async #end(worker: Worker, why: EndReason | "timeout"): Promise<void> {
    if (worker.dead) return;
    worker.dead = true;
    const at = this.#workers.indexOf(worker);
    if (at >= 0) this.#workers.splice(at, 1);
    this.#backoff(worker);
    // The request it was on fails; after a line that was not an answer, that one has already.
    const rest = worker.queue.splice(0);
    const head = why === "junk" || why === "astray" ? undefined : rest.shift();
    for (const pending of rest) pending.settle({ kind: "retry" });
    const killing = worker.kill(DEFAULT_GRACE_MS);
    this.#kills.add(killing);
    killing.finally(() => this.#kills.delete(killing));
    const blanks = worker.blankLines > 0
      ? ` (it wrote ${worker.blankLines} blank line(s), which are not answers)`
      : "";
    this.#options.log.log(
      "warn",
      `Persistent hook ${HOW_IT_ENDED[why]}${blanks}: it is started again`,
      {
        plugin: this.#plugin.name,
        event: this.#event,
        pid: worker.pid,
      },
    );
    if (why === "timeout") return head?.settle({ kind: "timeout" });
    if (why === "overflow") {
      return head?.settle({ kind: "overflow", bytes: this.#options.maxOutputBytes });
    }
    if (head === undefined) return;
    // Its exit status once the script has exited, but never past the request's deadline (a script
    // that closed stdout may take the kill's grace period to go).
    const timer = new AbortController();
    const exited = await Promise.race([
      worker.exited.then(() => true),
      sleep(head.deadline - performance.now(), timer.signal).then(() => false),
    ]);
    timer.abort();
    head.settle(
      exited
        ? { kind: "exit", status: await worker.exited, stderr: worker.stderrTail }
        : { kind: "timeout" },
    );
  }

  /**
   * When the next process may start: at once after a healthy one (it answered, or ran past the
   * backoff's reset time), else after the services' backoff.
   */
  #backoff(worker: Worker | null): void {
    const uptimeMs = worker === null ? 0 : performance.now() - worker.startedAt;
    const backoff = this.#options.backoff;
    if (worker !== null && (worker.answered > 0 || uptimeMs >= backoff.resetAfterMs)) {
      this.#streak = NO_STREAK;
      this.#fresh = true;
    }
    if (this.#fresh) {
      // A process that fails once (a crash, a kill at the timeout) is replaced before the next
      // request can wait on it; only a failing streak is slowed down.
      this.#fresh = false;
      this.#restartAt = 0;
      return;
    }
    const step = nextStep(
      "always",
      { failed: true, uptimeMs },
      this.#streak,
      backoff,
    );
    this.#streak = step.streak;
    // Never given up: a guard that keeps failing keeps blocking, retried at the longest delay.
    const delayMs = step.kind === "restart" ? step.delayMs : backoff.maxMs;
    this.#restartAt = performance.now() + delayMs;
  }
}

const INTERRUPTED: Outcome = { kind: "interrupted" };

/** Ask a one-shot run instead: the pool waits to restart its process. */
const ONCE = Symbol("once");

/** The `id` an answer line echoes: null when it has none (or not a string), undefined if not JSON. */
function answerId(line: string): string | null | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  const id = typeof value === "object" && value !== null
    ? (value as { id?: unknown }).id
    : undefined;
  return typeof id === "string" ? id : null;
}

/** Why an answer line was not the answer to the request `expected`. */
function outOfStep(id: string | null | undefined, expected: string): string {
  if (id === undefined) return "Persistent hook answered a line that is not JSON";
  const why = id === null ? 'it has no "id"' : `its "id" is "${id}"`;
  return `Persistent hook answered out of step: ${why}, the request's is "${expected}" ` +
    `(hint: answer each request once, echoing its "id")`;
}

/** Whether a line holds only spaces, tabs and carriage returns. */
function isBlank(line: Uint8Array): boolean {
  return line.every((byte) => byte === 0x20 || byte === 0x09 || byte === 0x0d);
}

const HOW_IT_ENDED = {
  timeout: "timed out",
  eof: "ended",
  overflow: "answered an overlong line",
  junk: "answered a line that is not JSON",
  astray: "answered out of step",
} as const;

/** The persistent hooks of one plugin index: a pool per persistent hook, made on first use. */
export class PersistentHooks {
  #pools = new Map<Plugin, Map<string, HookPool>>();
  #options: Required<PersistentOptions>;
  #closed = false;

  constructor(options: PersistentOptions = {}) {
    this.#options = {
      log: options.log ?? silentLogger,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT,
      backoff: options.backoff ?? DEFAULT_BACKOFF,
    };
  }

  /**
   * How the runners ask a consulted handler and tell a notified one: persistent hooks here, the
   * rest run once. A persistent notification (`post_tool_call`, an event) is done when its line
   * is written: what the script does with it is its own business, as a service's is.
   */
  readonly ask: AskHandler = (request, once) => {
    const plugin = request.plugin;
    // Retired or closed: a call still on the old index runs the script once rather than start a
    // process nobody would end.
    if (
      plugin === null || this.#closed || !mayBePersistent(request.event) ||
      hookSettings(plugin, request.event).persistent !== true ||
      plugin.hooks[request.event] !== request.script
    ) return once(request);
    let pools = this.#pools.get(plugin);
    if (pools === undefined) this.#pools.set(plugin, pools = new Map());
    let pool = pools.get(request.event);
    if (pool === undefined) {
      pool = new HookPool(plugin, request.event, this.#options);
      pools.set(request.event, pool);
    }
    return pool.closing ? once(request) : pool.ask(request, once);
  };

  /** Requests in flight are answered, then every process is ended (the index was replaced). */
  async retire(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#each((pool) => pool.retire()));
  }

  /** Ends every process now (the daemon stops). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(this.#each((pool) => pool.close()));
  }

  #each(fn: (pool: HookPool) => Promise<void>): Promise<void>[] {
    return [...this.#pools.values()].flatMap((pools) => [...pools.values()].map(fn));
  }
}
