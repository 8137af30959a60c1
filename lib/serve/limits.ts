/**
 * The daemon's bounds on work (lib/README.md, Daemon, "Limits"): {@linkcode ProcLimit}, one process
 * bound behind two gates, where a consulted call (a caller waits) gets a freed slot first and
 * events never hold the reserved ones, so slow event hooks never delay a route; and
 * {@linkcode EventQueue}, the order of fire-and-forget work, which the spool bounds and keeps.
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { type Limit, sleep } from "../async.ts";

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

/** Why a queued job never ran: the daemon stopped first; its event stays in the spool. */
export class StopDrop extends RunError {
  override name = "StopDrop";
}

/** Options of {@linkcode EventQueue}. */
export interface EventQueueOptions {
  /** Jobs running at once; default 56. */
  maxActive?: number;
}

interface Job {
  run(): void;
  leave(): void;
}

/** The order accepted fire-and-forget jobs run in (each queued once its event is on disk). */
export class EventQueue {
  #pending = new Fifo<Job>();
  #active = new Set<Promise<unknown>>();
  #maxActive: number;
  #closed = false;

  constructor(options: EventQueueOptions = {}) {
    this.#maxActive = Math.max(1, options.maxActive ?? 56);
  }

  /**
   * Queues `job`, to start in its turn but not before `notBefore` (a `performance.now()` time):
   * rejects with {@linkcode StopDrop} if closed before it starts; null if closed.
   */
  submit<T>(what: string, job: () => Promise<T>, { notBefore = 0 } = {}): Promise<T> | null {
    if (this.#closed) return null;
    const { promise, resolve, reject } = Promise.withResolvers<T>();
    this.#pending.push({
      run: () => {
        // A macrotask later at least, not a microtask: the caller's 202 is written first. In the
        // same microtask chain the job's first spawn (about 3 ms in a daemon) held the answer back.
        const running = sleep(Math.max(0, Math.ceil(notBefore - performance.now()))).then(job)
          .then(resolve, reject);
        this.#active.add(running);
        running.finally(() => {
          this.#active.delete(running);
          this.#next();
        });
      },
      leave: () => reject(new StopDrop(`"${what}" not run: the daemon is stopping`)),
    });
    this.#next();
    return promise;
  }

  /**
   * Stops starting jobs (the waiting ones are left and counted, their promises reject); `settled`
   * resolves once the running ones have (abort their scripts to make that quick).
   */
  close(): { left: number; settled: Promise<void> } {
    this.#closed = true;
    const waiting = this.#pending.drain();
    for (const job of waiting) job.leave();
    const settled = (async () => {
      while (this.#active.size > 0) await Promise.allSettled([...this.#active]);
    })();
    return { left: waiting.length, settled };
  }

  #next(): void {
    while (this.#active.size < this.#maxActive && this.#pending.length > 0) {
      this.#pending.shift()!.run();
    }
  }
}
