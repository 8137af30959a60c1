/**
 * Persistent hooks (`persistent: true` under the manifest's `tyhooks:` key), the daemon's answer
 * to a spawn per decision, after git's long-running filter process protocol: the script is
 * started once, in its own session as every script is, and then gets one request per line on its
 * stdin and answers each with one JSON line on its stdout. Each hook has a pool of up to
 * `max_procs` such processes (default 1), each answering one request at a time, in order.
 *
 * Every guarantee of a one-shot run holds per request: it is bounded by the hook's timeout (time
 * spent waiting for a free process included); a request past it kills the process's whole
 * session and the process is started again after the services' backoff; a crash is restarted the
 * same way; an answer line longer than the output cap, or not JSON, fails that request only (a
 * guard then follows its failure policy). An empty line is the empty answer, as empty stdout is
 * for a one-shot run. Processes hold no slot of `--max-procs`: the pool is their bound. A reload
 * retires the previous index's pools (requests in flight are answered, then the processes are
 * ended) and `close()` ends them at stop.
 *
 * @module
 */

import type { AskHandler, AskRequest } from "../consult/consult.ts";
import type { Plugin } from "../plugins/types.ts";
import { DEFAULT_MAX_PROCS, hookSettings } from "../plugins/hook_settings.ts";
import type { RunResult } from "../process/record.ts";
import { spawnIsolated } from "../process/spawn_isolated.ts";
import { DEFAULT_GRACE_MS, terminateGroup } from "../process/kill_group.ts";
import { type ChunkReader, openReader } from "../process/output_cap.ts";
import { DEFAULT_MAX_OUTPUT } from "../process/run_script.ts";
import { pluginEnv } from "../hooks/runner.ts";
import { type BackoffOptions, DEFAULT_BACKOFF, nextStep, NO_STREAK } from "../services/backoff.ts";
import { clearableTimeout, sleep } from "../_timers.ts";
import { concat } from "../_bytes.ts";
import { type Logger, silentLogger } from "../log.ts";

/** The consulted hooks that answer one JSON document, so can be persistent. */
export const PERSISTENT_EVENTS: readonly string[] = [
  "task.placement",
  "task.hosts",
  "pre_tool_call",
];

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

/** How one request to a process ended. */
type Outcome =
  | { kind: "answer"; line: string; bytes: number }
  | { kind: "timeout" }
  /** `inStep`: the whole line was read, so the next answer is the next request's. */
  | { kind: "overflow"; bytes: number; inStep: boolean }
  | { kind: "exit"; status: Deno.CommandStatus | null };

/** Reads newline-terminated lines from a pipe, one at a time, bounded. */
class LineReader {
  #reader: ChunkReader;
  #pending: Uint8Array = new Uint8Array(0);
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = openReader(stream);
  }
  /**
   * The next line (without its newline); else `eof` when the pipe ended, `long` when a whole
   * line longer than `cap` was read (and dropped), `overflow` when `cap` bytes came without a
   * newline (the rest of that line is still unread).
   */
  async next(cap: number): Promise<{ line: Uint8Array } | { end: "eof" | "long" | "overflow" }> {
    while (true) {
      const newline = this.#pending.indexOf(10);
      if (newline >= 0) {
        const line = this.#pending.slice(0, newline);
        this.#pending = this.#pending.slice(newline + 1);
        return newline > cap ? { end: "long" } : { line };
      }
      if (this.#pending.length > cap) return { end: "overflow" };
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await this.#reader.read();
      } catch {
        return { end: "eof" };
      }
      if (chunk.done) return { end: "eof" };
      // A copy: the reader reuses its buffer.
      this.#pending = concat(
        [this.#pending, chunk.value],
        this.#pending.length + chunk.value.length,
      );
    }
  }
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}

/** One running process of a pool. */
class Worker {
  readonly pid: number;
  readonly startedAt = performance.now();
  readonly exited: Promise<Deno.CommandStatus | null>;
  busy = true;
  dead = false;
  stderrTail = "";
  #child: Deno.ChildProcess;
  #writer: WritableStreamDefaultWriter<Uint8Array>;
  #lines: LineReader;

  constructor(script: string, cwd: string | undefined, env: Record<string, string>) {
    this.#child = spawnIsolated(script, { cwd, env, stdin: true });
    this.pid = this.#child.pid;
    this.#writer = this.#child.stdin.getWriter();
    this.#writer.closed.catch(() => {});
    this.#lines = new LineReader(this.#child.stdout);
    this.exited = this.#child.status.then((s) => s, () => null);
    this.exited.then(() => this.dead = true);
    this.#drainStderr();
  }

  /** Writes `request` and reads one answer line, within `timeoutMs`. */
  async ask(request: string, timeoutMs: number, cap: number): Promise<Outcome> {
    const timeout = clearableTimeout(Math.max(0, timeoutMs));
    const timedOut = new Promise<Outcome>((resolve) =>
      timeout.signal.addEventListener("abort", () => resolve({ kind: "timeout" }), { once: true })
    );
    // Not raced against `exited`: each race would leave a reaction on that promise until the
    // process ends, thousands per process. An exit is seen as the end of stdout instead.
    const answered = (async (): Promise<Outcome> => {
      try {
        await this.#writer.write(encoder.encode(request.endsWith("\n") ? request : `${request}\n`));
      } catch {
        return { kind: "exit", status: await this.exited };
      }
      const next = await this.#lines.next(cap);
      if ("line" in next) {
        return { kind: "answer", line: decoder.decode(next.line), bytes: next.line.length };
      }
      if (next.end === "eof") return { kind: "exit", status: await this.exited };
      return { kind: "overflow", bytes: cap, inStep: next.end === "long" };
    })();
    try {
      return await Promise.race([answered, timedOut]);
    } finally {
      timeout.clear();
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

/** A request waiting for a process. */
interface Waiter {
  wake(): void;
}

/** The pool of one persistent hook. */
class HookPool {
  #plugin: Plugin;
  #event: string;
  #script: string;
  #maxProcs: number;
  #options: Required<PersistentOptions>;
  #workers: Worker[] = [];
  #waiters: Waiter[] = [];
  #streak = NO_STREAK;
  #restartAt = 0;
  #inFlight = 0;
  #drained: PromiseWithResolvers<void> | null = null;
  #kills = new Set<Promise<void>>();
  closing = false;

  constructor(plugin: Plugin, event: string, options: Required<PersistentOptions>) {
    this.#plugin = plugin;
    this.#event = event;
    this.#script = plugin.hooks[event];
    this.#maxProcs = Math.max(1, hookSettings(plugin, event).maxProcs ?? DEFAULT_MAX_PROCS);
    this.#options = options;
  }

  async ask(request: AskRequest): Promise<RunResult> {
    const started = performance.now();
    const deadline = started + request.timeoutMs;
    const result = this.#result(started);
    this.#inFlight++;
    try {
      const worker = await this.#acquire(request, deadline);
      if (worker === "timeout") return { ...result(), timed_out: true };
      if (worker === "interrupted") return { ...result(), error: "Interrupted" };
      if (typeof worker === "string") return { ...result(), error: worker };
      const asked = worker.ask(request.stdin ?? "{}\n", deadline - performance.now(), this.#cap);
      const aborted = new Promise<null>((resolve) => {
        if (request.signal.aborted) resolve(null);
        request.signal.addEventListener("abort", () => resolve(null), { once: true });
      });
      // Aborted (the call is settled): the answer still comes, and is read and dropped then, so
      // the next request on this process reads its own answer.
      asked.then((outcome) => this.#release(worker, outcome, request.graceMs));
      const outcome = await Promise.race([asked, aborted]);
      const base = { ...result(), pid: worker.pid };
      if (outcome === null) return { ...base, error: "Interrupted" };
      return this.#toResult(base, outcome, worker);
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

  /** Ends every process now. */
  async close(): Promise<void> {
    this.closing = true;
    const workers = this.#workers.splice(0);
    await Promise.all([
      ...workers.map((worker) => worker.kill(DEFAULT_GRACE_MS)),
      ...this.#kills,
    ]);
  }

  get #cap(): number {
    return this.#options.maxOutputBytes;
  }

  #result(started: number): () => RunResult {
    return () => ({
      plugin: this.#plugin.name,
      script: this.#script,
      pid: null,
      exit_code: null,
      signal: null,
      timed_out: false,
      duration_ms: Math.round(performance.now() - started),
      stdout_bytes: 0,
      stderr_bytes: 0,
      stdout_truncated: false,
      stderr_truncated: false,
      error: null,
      stdout: "",
      stderr: "",
    });
  }

  #toResult(base: RunResult, outcome: Outcome, worker: Worker): RunResult {
    switch (outcome.kind) {
      case "timeout":
        return { ...base, timed_out: true };
      case "overflow":
        return {
          ...base,
          stdout_bytes: outcome.bytes,
          stdout_truncated: true,
          error: `Persistent hook answered a line longer than ${this.#cap} bytes`,
        };
      case "exit": {
        const how = outcome.status === null
          ? "ended"
          : outcome.status.signal !== null
          ? `was killed by ${outcome.status.signal}`
          : `exited ${outcome.status.code}`;
        return {
          ...base,
          stderr: worker.stderrTail,
          error: `Persistent hook ${how} before answering`,
        };
      }
      case "answer": {
        const ok = { ...base, exit_code: 0, stdout: outcome.line, stdout_bytes: outcome.bytes };
        if (outcome.line.trim() === "") return ok;
        try {
          JSON.parse(outcome.line);
        } catch {
          return {
            ...ok,
            exit_code: null,
            error: "Persistent hook answered a line that is not JSON",
          };
        }
        return ok;
      }
    }
  }

  /** An idle process, a new one, or why there is none within the deadline. */
  async #acquire(
    request: AskRequest,
    deadline: number,
  ): Promise<Worker | "timeout" | "interrupted" | string> {
    while (true) {
      if (request.signal.aborted) return "interrupted";
      const idle = this.#workers.find((w) => !w.busy && !w.dead);
      if (idle !== undefined) {
        idle.busy = true;
        return idle;
      }
      const left = deadline - performance.now();
      if (left <= 0) return "timeout";
      if (this.#workers.length < this.#maxProcs) {
        const wait = this.#restartAt - performance.now();
        if (wait > 0) {
          // Backing off after a crash or a kill: wait, within the request's own time.
          if (!(await sleep(Math.min(wait, left), request.signal))) return "interrupted";
          continue;
        }
        return this.#start(request);
      }
      if (!(await this.#waitForRelease(request.signal, left))) {
        return request.signal.aborted ? "interrupted" : "timeout";
      }
    }
  }

  #start(request: AskRequest): Worker | string {
    let worker: Worker;
    try {
      worker = new Worker(this.#script, this.#plugin.dir, {
        ...request.env,
        ...pluginEnv(this.#plugin),
        TASK_EVENT: this.#event,
      });
    } catch (error) {
      this.#backoff(0);
      return `Cannot start "${this.#script}": ${(error as Error).message}`;
    }
    this.#workers.push(worker);
    this.#options.log.log("debug", "Started a persistent hook", {
      plugin: this.#plugin.name,
      event: this.#event,
      pid: worker.pid,
    });
    worker.exited.then((status) => {
      // A request in flight sees the exit itself (and releases the process).
      if (this.closing || worker.busy || !this.#workers.includes(worker)) return;
      // Crashed between requests: its place is free after the backoff.
      this.#drop(worker);
      this.#options.log.log("warn", "Persistent hook exited; it is restarted on the next request", {
        plugin: this.#plugin.name,
        event: this.#event,
        pid: worker.pid,
        exit_code: status?.code ?? null,
        signal: status?.signal ?? null,
        stderr: worker.stderrTail.trim().slice(-200),
      });
      this.#backoff(performance.now() - worker.startedAt);
      this.#wakeOne();
    });
    return worker;
  }

  #release(worker: Worker, outcome: Outcome, graceMs: number): void {
    if (outcome.kind === "answer" || (outcome.kind === "overflow" && outcome.inStep)) {
      worker.busy = false;
      // It answered: whatever went wrong before, the next failure backs off from the start.
      this.#streak = NO_STREAK;
      if (this.closing) this.#kill(worker, graceMs);
      this.#wakeOne();
      return;
    }
    // A timeout or an overlong line leaves the process out of step: it is ended, and started
    // again after the backoff. A process that exited is just replaced.
    this.#drop(worker);
    if (outcome.kind !== "exit") {
      this.#options.log.log(
        "warn",
        `Persistent hook ${
          outcome.kind === "timeout" ? "timed out" : "answered an overlong line"
        }: restarting it`,
        {
          plugin: this.#plugin.name,
          event: this.#event,
          pid: worker.pid,
        },
      );
      this.#kill(worker, graceMs);
    }
    this.#backoff(performance.now() - worker.startedAt);
    this.#wakeOne();
  }

  #drop(worker: Worker): void {
    const at = this.#workers.indexOf(worker);
    if (at >= 0) this.#workers.splice(at, 1);
  }

  #kill(worker: Worker, graceMs: number): void {
    const killing = worker.kill(graceMs);
    this.#kills.add(killing);
    killing.finally(() => this.#kills.delete(killing));
  }

  #backoff(uptimeMs: number): void {
    const step = nextStep(
      "always",
      { failed: true, uptimeMs },
      this.#streak,
      this.#options.backoff,
    );
    this.#streak = step.streak;
    // Never given up: a guard that keeps failing keeps blocking, and is retried at the longest delay.
    const delayMs = step.kind === "restart" ? step.delayMs : this.#options.backoff.maxMs;
    this.#restartAt = performance.now() + delayMs;
  }

  #waitForRelease(signal: AbortSignal, ms: number): Promise<boolean> {
    return new Promise((resolve) => {
      const timeout = clearableTimeout(ms);
      const waiter: Waiter = {
        wake: () => finish(true),
      };
      const finish = (woken: boolean) => {
        timeout.clear();
        signal.removeEventListener("abort", onAbort);
        const at = this.#waiters.indexOf(waiter);
        if (at >= 0) this.#waiters.splice(at, 1);
        resolve(woken);
      };
      const onAbort = () => finish(false);
      timeout.signal.addEventListener("abort", () => finish(false), { once: true });
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiters.push(waiter);
    });
  }

  #wakeOne(): void {
    this.#waiters.shift()?.wake();
  }
}

/**
 * The persistent hooks of one plugin index: a pool per persistent hook, made on first use.
 */
export class PersistentHooks {
  #pools = new Map<string, HookPool>();
  #options: Required<PersistentOptions>;

  /** @param options Logger, output cap, backoff. */
  constructor(options: PersistentOptions = {}) {
    this.#options = {
      log: options.log ?? silentLogger,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT,
      backoff: options.backoff ?? DEFAULT_BACKOFF,
    };
  }

  /** The consult loop's way to ask a handler: persistent hooks here, the rest run once. */
  readonly ask: AskHandler = (request, once) => {
    const plugin = request.plugin;
    if (
      plugin === null || !PERSISTENT_EVENTS.includes(request.event) ||
      hookSettings(plugin, request.event).persistent !== true ||
      plugin.hooks[request.event] !== request.script
    ) return once(request);
    const key = `${plugin.dir}\0${request.event}`;
    let pool = this.#pools.get(key);
    if (pool === undefined) {
      pool = new HookPool(plugin, request.event, this.#options);
      this.#pools.set(key, pool);
    }
    return pool.closing ? once(request) : pool.ask(request);
  };

  /** Requests in flight are answered, then every process is ended (the index was replaced). */
  async retire(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.retire()));
  }

  /** Ends every process now (the daemon stops). */
  async close(): Promise<void> {
    await Promise.all([...this.#pools.values()].map((pool) => pool.close()));
  }
}
