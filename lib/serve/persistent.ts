/**
 * The pools of persistent hooks (lib/README.md, Daemon, "Persistent hooks"), the daemon's answer
 * to a spawn per decision, after git's long-running filter process protocol; one process and its
 * line protocol are persistent_worker.ts. Every guarantee of a one-shot run holds per request, and
 * while a restart waits its backoff, one-shot runs answer, so a guard keeps deciding within its
 * timeout. The processes hold no slot of `--max-procs` (they would starve the one-shot runs):
 * a pool is their bound, and no pool has more processes than `--max-procs`.
 *
 * @module
 */

import type { AskHandler, AskRequest } from "../consult/consult.ts";
import { eventSpec, mayBePersistent } from "../events.ts";
import type { Plugin } from "../plugins/types.ts";
import { DEFAULT_POOL_SIZE, hookSettings } from "../plugins/hook_settings.ts";
import { DEFAULT_MAX_PROCS } from "./limits.ts";
import { blankResult, DEFAULT_MAX_OUTPUT, type RunResult } from "../process/run_script.ts";
import { DEFAULT_GRACE_MS } from "../process/group.ts";
import { pluginEnv } from "../hooks/runner.ts";
import { type BackoffOptions, DEFAULT_BACKOFF, nextStep, NO_STREAK } from "../services/backoff.ts";
import { onTimeout, sleep } from "../async.ts";
import { type Logger, silentLogger } from "../log.ts";
import { type EndReason, type Outcome, Pending, Worker } from "./persistent_worker.ts";

/** Options of {@linkcode PersistentHooks}. */
export interface PersistentOptions {
  log?: Logger;
  /** The most processes one pool runs, whatever a hook's `max_procs` says (`--max-procs`). */
  maxProcs?: number;
  /** Restart delays; default the services' (1 s doubling to 30 s). */
  backoff?: BackoffOptions;
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
    const wanted = hookSettings(plugin, event).maxProcs ?? DEFAULT_POOL_SIZE;
    this.#maxProcs = Math.max(1, Math.min(wanted, options.maxProcs));
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
        result.error = `Persistent hook answered a line longer than ${DEFAULT_MAX_OUTPUT} bytes`;
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

  /** An idle process, a new one, the least loaded, or (backing off with none) a one-shot run. */
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
        cap: DEFAULT_MAX_OUTPUT,
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

  /** Ends a process that timed out, ended or got out of step; those behind are asked again. */
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
    const message = `Persistent hook ${HOW_IT_ENDED[why]}${blanks}: it is started again`;
    const fields = { plugin: this.#plugin.name, event: this.#event, pid: worker.pid };
    this.#options.log.log("warn", message, fields);
    if (why === "timeout") return head?.settle({ kind: "timeout" });
    if (why === "overflow") return head?.settle({ kind: "overflow", bytes: DEFAULT_MAX_OUTPUT });
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
    const step = nextStep("always", { failed: true, uptimeMs }, this.#streak, backoff);
    this.#streak = step.streak;
    // Never given up: a guard that keeps failing keeps blocking, retried at the longest delay.
    const delayMs = step.kind === "restart" ? step.delayMs : backoff.maxMs;
    this.#restartAt = performance.now() + delayMs;
  }
}

const INTERRUPTED: Outcome = { kind: "interrupted" };

/** Ask a one-shot run instead: the pool waits to restart its process. */
const ONCE = Symbol("once");

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
      maxProcs: options.maxProcs ?? DEFAULT_MAX_PROCS,
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
