/**
 * The daemon's current plugin index. Requests take the current snapshot when they start and
 * keep it to the end, so a reload never changes the plugins under a call in flight. Reloads
 * are serialized and coalesced; a reload that fails as a whole (the loader threw) keeps the
 * previous snapshot. A plugin whose manifest broke is skipped by the loader like at any start:
 * the other plugins keep serving and its warning is logged.
 *
 * @module
 */

import type { LoadWarning, PluginIndex } from "../plugins/types.ts";
import { type Logger, silentLogger } from "../log.ts";
import { logWarnings } from "../plugins/log_warnings.ts";
import { type DirWatch, watchDir, type WatchDirOptions } from "./watch_dir.ts";

/** Options of {@linkcode IndexHolder}. */
export interface IndexHolderOptions<T> {
  /** Loads the index (the plugin loader). */
  load(dir: string): Promise<PluginIndex>;
  /** Builds what requests use from an index (runners over it, etc.). */
  build(index: PluginIndex): T;
  /** Called with what `build` made of an index once a newer one replaced it. */
  retire?(built: T): void;
  log?: Logger;
  /** Watch settings; `false` disables the watch (SIGHUP and `reload()` still work). */
  watch?: WatchDirOptions | false;
}

/** What a request works from. */
export interface Snapshot<T> {
  index: PluginIndex;
  /** What `build` made of the index. */
  built: T;
  /** Counts loads, from 1. */
  generation: number;
}

function warningKey(w: LoadWarning): string {
  return `${w.path}\0${w.line}\0${w.column}\0${w.message}`;
}

/**
 * Holds the current snapshot and reloads it on change.
 *
 * Requires `--allow-read`.
 *
 * @example
 * ```ts
 * import { IndexHolder } from "./index_holder.ts";
 * const holder = new IndexHolder("/none", {
 *   load: (dir) => Promise.resolve({ dir, plugins: [], warnings: [] }),
 *   build: (index) => index.plugins.length,
 *   watch: false,
 * });
 * await holder.start();
 * console.assert(holder.current.built === 0);
 * holder.close();
 * ```
 */
export class IndexHolder<T> {
  /** The plugins dir. */
  readonly dir: string;
  #options: IndexHolderOptions<T>;
  #log: Logger;
  #current: Snapshot<T> | undefined;
  #chain: Promise<void> = Promise.resolve();
  #queued: Promise<void> | null = null;
  #watch: DirWatch | undefined;

  /**
   * @param dir The plugins dir (it may not exist).
   * @param options Loader, builder, logger, watch settings.
   */
  constructor(dir: string, options: IndexHolderOptions<T>) {
    this.dir = dir;
    this.#options = options;
    this.#log = options.log ?? silentLogger;
  }

  /** The current snapshot. Take it once per request and keep it. */
  get current(): Snapshot<T> {
    if (this.#current === undefined) throw new Error("IndexHolder.start() was not awaited");
    return this.#current;
  }

  /**
   * Starts watching (first, so no change between the load and the watch is missed), then loads.
   *
   * @throws {Error} When the first load fails (nothing to serve from).
   */
  async start(): Promise<void> {
    if (this.#options.watch !== false) {
      this.#watch = watchDir(this.dir, () => this.reload("change"), {
        log: this.#log,
        ...this.#options.watch,
      });
    }
    const index = await this.#options.load(this.dir);
    this.#swap(index);
    logWarnings(this.#log, index.warnings);
  }

  /**
   * Loads the index again. Calls while one reload waits to start share it.
   *
   * @param reason For the log: `change`, `SIGHUP`.
   * @returns When a load started after this call has been applied (or failed and been logged).
   */
  reload(reason: string): Promise<void> {
    if (this.#queued !== null) return this.#queued;
    const next = this.#chain.then(() => {
      this.#queued = null;
      return this.#reload(reason);
    });
    this.#queued = next;
    this.#chain = next;
    return next;
  }

  /** Stops watching. Snapshots already taken stay usable. */
  close(): void {
    this.#watch?.close();
  }

  async #reload(reason: string): Promise<void> {
    const previous = this.current;
    let index: PluginIndex;
    try {
      index = await this.#options.load(this.dir);
    } catch (error) {
      this.#log.log(
        "error",
        `Cannot reload the plugins: ${(error as Error).message}: keeping the previous ones`,
        { dir: this.dir, reason },
      );
      return;
    }
    // A warning seen at the previous load was logged then; log only the new ones.
    const seen = new Set(previous.index.warnings.map(warningKey));
    logWarnings(this.#log, index.warnings.filter((w) => !seen.has(warningKey(w))));
    this.#swap(index);
    this.#log.log("info", "Reloaded the plugins", {
      reason,
      plugins: index.plugins.length,
      warnings: index.warnings.length,
    });
  }

  #swap(index: PluginIndex): void {
    const previous = this.#current;
    const generation = (previous?.generation ?? 0) + 1;
    this.#current = { index, built: this.#options.build(index), generation };
    if (previous !== undefined) this.#options.retire?.(previous.built);
  }
}
