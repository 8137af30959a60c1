/**
 * The daemon's bounds on work.
 *
 * {@linkcode ProcLimit} bounds hook processes (`--max-procs`), shared by every script the daemon
 * runs. Two gates lead to the same slots: consulted calls (route, placement, tool pre, actions: a
 * caller is waiting) and events (fire-and-forget). Consulted calls never queue behind events: a
 * freed slot goes to a waiting consulted call first, and events may hold at most `max - reserved`
 * slots, so even when event hooks are slow the reserved slots stay free for consulted calls.
 *
 * {@linkcode EventQueue} holds fire-and-forget work (events, status changes, tool post), bounded:
 * past `maxPending` waiting jobs, or past `maxBytes` of request bodies held by waiting and running
 * jobs, a new one is dropped and counted in the log, never blocking the caller and never growing
 * memory (a count alone let 300 queued 1 MB events take 350 MB). At most `maxActive` jobs run at
 * once; their hook processes still pass the event gate of the process limit.
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { type Logger, silentLogger } from "../log.ts";
import type { Limit } from "../async.ts";

// A FIFO with O(1) shift: Array#shift is O(n), and the event queue may hold 10,000 entries.
class Fifo<T> {
  #items: (T | undefined)[] = [];
  #head = 0;

  get length(): number {
    return this.#items.length - this.#head;
  }

  push(item: T): void {
    this.#items.push(item);
  }

  shift(): T | undefined {
    if (this.#head >= this.#items.length) return undefined;
    const item = this.#items[this.#head];
    this.#items[this.#head++] = undefined;
    // Compact once the consumed prefix dominates, so memory follows the live length.
    if (this.#head > 1024 && this.#head * 2 > this.#items.length) {
      this.#items = this.#items.slice(this.#head);
      this.#head = 0;
    }
    return item;
  }

  drain(): T[] {
    const items = this.#items.slice(this.#head) as T[];
    this.#items = [];
    this.#head = 0;
    return items;
  }
}

/** Default `--max-procs`. */
export const DEFAULT_MAX_PROCS = 64;

/** Options of {@linkcode ProcLimit}. */
export interface ProcLimitOptions {
  /**
   * Slots events may never take; default max/8 (at least 1 when max > 1, 0 when max is 1, so
   * a limit of one still runs events).
   */
  reserved?: number;
}

type Kind = "consulted" | "event";

/** The shared process bound. */
export class ProcLimit {
  /** The bound on processes at once. */
  readonly max: number;
  /** The bound on event processes at once. */
  readonly eventMax: number;
  #running = 0;
  #eventsRunning = 0;
  #consultWaiters = new Fifo<() => void>();
  #eventWaiters = new Fifo<() => void>();

  /** `max` is `--max-procs`; `options.reserved` the slots kept for consulted calls. */
  constructor(max: number = DEFAULT_MAX_PROCS, options: ProcLimitOptions = {}) {
    this.max = Math.max(1, Math.floor(max));
    const reserved = options.reserved ?? (this.max > 1 ? Math.max(1, Math.floor(this.max / 8)) : 0);
    this.eventMax = Math.max(1, this.max - reserved);
  }

  /** Processes running now. */
  get running(): number {
    return this.#running;
  }

  /** Runs waiting for a slot: consulted and event. */
  get waiting(): { consulted: number; event: number } {
    return { consulted: this.#consultWaiters.length, event: this.#eventWaiters.length };
  }

  /** The gate of consulted calls; pass it as a Runner's `limit`. */
  readonly consulted: Limit = (run) => this.#gate("consulted", run);

  /** The gate of event hooks; pass it as a Runner's `limit`. */
  readonly event: Limit = (run) => this.#gate("event", run);

  async #gate<T>(kind: Kind, run: () => Promise<T>): Promise<T> {
    if (this.#mayStart(kind)) this.#take(kind);
    else await new Promise<void>((resolve) => this.#waiters(kind).push(resolve));
    try {
      return await run();
    } finally {
      this.#running--;
      if (kind === "event") this.#eventsRunning--;
      this.#dispatch();
    }
  }

  #mayStart(kind: Kind): boolean {
    if (this.#running >= this.max) return false;
    if (kind === "consulted") return true;
    // Waiting consulted calls have the first claim on a free slot.
    return this.#consultWaiters.length === 0 && this.#eventsRunning < this.eventMax;
  }

  #take(kind: Kind): void {
    this.#running++;
    if (kind === "event") this.#eventsRunning++;
  }

  #waiters(kind: Kind): Fifo<() => void> {
    return kind === "consulted" ? this.#consultWaiters : this.#eventWaiters;
  }

  // Hands free slots over: the slot is taken here, before the waiter resumes, so a newcomer
  // cannot slip in between.
  #dispatch(): void {
    while (this.#running < this.max) {
      if (this.#consultWaiters.length > 0) {
        this.#take("consulted");
        this.#consultWaiters.shift()!();
      } else if (this.#eventWaiters.length > 0 && this.#eventsRunning < this.eventMax) {
        this.#take("event");
        this.#eventWaiters.shift()!();
      } else {
        return;
      }
    }
  }
}

/** Default bound on waiting jobs. */
export const DEFAULT_MAX_PENDING = 10_000;
/** Default bound on the bytes queued jobs hold: 64 MiB. */
export const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
/** Why a queued job never ran: the daemon stopped first (counted once in the stop log). */
export class StopDrop extends RunError {
  override name = "StopDrop";
}

/** At most one "dropped" log line per this many ms; the count says how many. */
const DROP_LOG_INTERVAL_MS = 1000;

/** Options of {@linkcode EventQueue}. */
export interface EventQueueOptions {
  /** Jobs waiting at most; default 10,000. */
  maxPending?: number;
  /** Bytes held by waiting and running jobs at most; default 64 MiB. */
  maxBytes?: number;
  /** Jobs running at once; default 56. */
  maxActive?: number;
  log?: Logger;
}

interface Job {
  run(): void;
  drop(): void;
}

/** The bounded queue of fire-and-forget jobs. */
export class EventQueue {
  #pending = new Fifo<Job>();
  #active = new Set<Promise<unknown>>();
  #maxPending: number;
  #maxBytes: number;
  #bytes = 0;
  #maxActive: number;
  #log: Logger;
  #closed = false;
  #dropped = 0;
  #droppedLogged = 0;
  #lastDropLog = -Infinity;
  #dropTimer: ReturnType<typeof setTimeout> | undefined;

  constructor(options: EventQueueOptions = {}) {
    this.#maxPending = options.maxPending ?? DEFAULT_MAX_PENDING;
    this.#maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.#maxActive = Math.max(1, options.maxActive ?? 56);
    this.#log = options.log ?? silentLogger;
  }

  /** Jobs dropped so far (queue full, or the daemon stopping). */
  get dropped(): number {
    return this.#dropped;
  }

  /** Jobs waiting, and running, and the bytes they hold. */
  get size(): { pending: number; active: number; bytes: number } {
    return { pending: this.#pending.length, active: this.#active.size, bytes: this.#bytes };
  }

  /**
   * Queues `job`. The returned promise settles with the job's result; it rejects with a
   * `RunError` when the job is dropped later because the queue closed.
   *
   * `what` names the job in the log; `bytes` is what it holds until it settles (its request
   * body). Null when the job was dropped at once (queue full or closed).
   */
  submit<T>(what: string, job: () => Promise<T>, bytes = 0): Promise<T> | null {
    if (
      this.#closed || this.#pending.length >= this.#maxPending ||
      this.#bytes + bytes > this.#maxBytes
    ) {
      this.#noteDrop(what);
      return null;
    }
    this.#bytes += bytes;
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    this.#pending.push({
      run: () => {
        const running = Promise.resolve().then(job).then(resolve, reject);
        this.#active.add(running);
        running.finally(() => {
          this.#bytes -= bytes;
          this.#active.delete(running);
          this.#next();
        });
      },
      drop: () => {
        this.#bytes -= bytes;
        reject(new StopDrop(`Dropped "${what}": the daemon is stopping`));
      },
    });
    this.#next();
    return promise;
  }

  /**
   * Stops taking jobs, drops the waiting ones (their promises reject), and waits for the
   * running ones to settle (abort their scripts first to make that quick).
   */
  async close(): Promise<void> {
    this.#closed = true;
    const waiting = this.#pending.drain();
    for (const job of waiting) job.drop();
    this.#dropped += waiting.length;
    this.#flushDropLog();
    while (this.#active.size > 0) await Promise.allSettled([...this.#active]);
  }

  #next(): void {
    while (this.#active.size < this.#maxActive && this.#pending.length > 0) {
      this.#pending.shift()!.run();
    }
  }

  #noteDrop(what: string): void {
    this.#dropped++;
    const now = performance.now();
    if (now - this.#lastDropLog < DROP_LOG_INTERVAL_MS) {
      // A burst of drops gives one line a second; the last of them is counted when it ends.
      this.#dropTimer ??= setTimeout(() => this.#flushDropLog(), DROP_LOG_INTERVAL_MS);
      return;
    }
    this.#lastDropLog = now;
    this.#droppedLogged = this.#dropped;
    this.#log.log(
      "warn",
      this.#closed
        ? `Dropped "${what}": the daemon is stopping`
        : `Event queue full: dropped "${what}"`,
      { waiting: this.#pending.length, bytes: this.#bytes, dropped_total: this.#dropped },
    );
  }

  #flushDropLog(): void {
    clearTimeout(this.#dropTimer);
    this.#dropTimer = undefined;
    if (this.#dropped === this.#droppedLogged) return;
    this.#droppedLogged = this.#dropped;
    this.#lastDropLog = performance.now();
    this.#log.log("warn", "Events dropped", { dropped_total: this.#dropped });
  }
}
