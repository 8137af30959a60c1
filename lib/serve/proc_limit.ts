/**
 * The daemon's bound on hook processes (`--max-procs`), shared by every script it runs. Two
 * gates lead to the same slots: consulted calls (route, placement, tool pre, actions: a caller
 * is waiting) and events (fire-and-forget). Consulted calls never queue behind events:
 *
 * - a freed slot goes to a waiting consulted call first;
 * - events may hold at most `max - reserved` slots, so even when event hooks are slow the
 *   reserved slots stay free for consulted calls (they only ever wait for each other).
 *
 * @module
 */

import { Fifo } from "./_fifo.ts";

/** Default `--max-procs`. */
export const DEFAULT_MAX_PROCS = 64;

/** A gate: runs `run` once a slot is free, and frees the slot when it settles. */
export type Gate = <T>(run: () => Promise<T>) => Promise<T>;

/** Options of {@linkcode ProcLimit}. */
export interface ProcLimitOptions {
  /**
   * Slots events may never take; default max/8 (at least 1 when max > 1, 0 when max is 1, so
   * a limit of one still runs events).
   */
  reserved?: number;
}

type Kind = "consulted" | "event";

/**
 * The shared process bound.
 *
 * @example
 * ```ts
 * import { ProcLimit } from "./proc_limit.ts";
 * const limit = new ProcLimit(2);
 * const answer = await limit.consulted(() => Promise.resolve(42));
 * console.assert(answer === 42 && limit.running === 0);
 * ```
 */
export class ProcLimit {
  /** The bound on processes at once. */
  readonly max: number;
  /** The bound on event processes at once. */
  readonly eventMax: number;
  #running = 0;
  #eventsRunning = 0;
  #consultWaiters = new Fifo<() => void>();
  #eventWaiters = new Fifo<() => void>();

  /**
   * @param max The bound (`--max-procs`), at least 1.
   * @param options The slots kept for consulted calls.
   */
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
  readonly consulted: Gate = (run) => this.#gate("consulted", run);

  /** The gate of event hooks; pass it as a Runner's `limit`. */
  readonly event: Gate = (run) => this.#gate("event", run);

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
