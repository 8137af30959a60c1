/**
 * The daemon's current plugin index, reloaded when what it was loaded from changes (lib/README.md,
 * Daemon, "Reload"). A request keeps the snapshot it started with. A missing dir is polled for
 * rather than its parent watched (that may be the whole of `~/.config`); a watched path's identity
 * is polled too, as a symlink swapped to another tree (`ln -sfn`) sends the old tree no event.
 *
 * @module
 */

import { type Logger, silentLogger } from "../log.ts";
import type { LoadWarning, PluginIndex } from "../plugins/types.ts";
import { logWarnings } from "../plugins/messages.ts";
import { basename, dirname } from "../paths.ts";

/** Options of {@linkcode watchDir}: how the daemon watches the plugins dir. */
export interface WatchDirOptions {
  /** Quiet time after the last change before `onChange` runs; default 200 ms. */
  debounceMs?: number;
  /** How often a missing dir is looked for and a watched one checked for a swap; default 1 s. */
  pollMs?: number;
  /** Where a watch that cannot be set up is reported; default silent. */
  log?: Logger;
  /** Whether a change to this path calls for `onChange`; default every change does. */
  matters?: (path: string) => boolean;
}

/** A running watch. */
export interface DirWatch {
  /** Stops watching; no `onChange` after it returns. */
  close(): void;
}

/** The dir's inode, or null when there is no such directory. */
async function dirIdentity(path: string): Promise<string | null> {
  try {
    const info = await Deno.stat(path);
    return info.isDirectory ? `${info.dev}:${info.ino}` : null;
  } catch {
    return null;
  }
}

/**
 * Calls `onChange` once things under `dir` have changed and then been quiet for `debounceMs`
 * (an editor's save, a `git pull`, a `plugins add` each give one call). Never throws: a watch
 * that cannot be set up is logged, and SIGHUP remains the way to reload.
 */
export function watchDir(
  dir: string,
  onChange: () => void,
  options: WatchDirOptions = {},
): DirWatch {
  return new DirWatcher(dir, onChange, options);
}

/** {@linkcode watchDir}'s watch: poll for the dir, watch it, debounce, watch anew when it goes. */
class DirWatcher implements DirWatch {
  #dir: string;
  #onChange: () => void;
  #debounceMs: number;
  #pollMs: number;
  #log: Logger;
  #matters: (path: string) => boolean;
  #closed = false;
  #started = false;
  #watcher: Deno.FsWatcher | undefined;
  /** The identity of the dir the watcher is on. */
  #watched: string | null = null;
  #debounce: ReturnType<typeof setTimeout> | undefined;
  #poll: ReturnType<typeof setTimeout> | undefined;

  constructor(dir: string, onChange: () => void, options: WatchDirOptions) {
    this.#dir = dir;
    this.#onChange = onChange;
    this.#debounceMs = options.debounceMs ?? 200;
    this.#pollMs = options.pollMs ?? 1000;
    this.#log = options.log ?? silentLogger;
    this.#matters = options.matters ?? (() => true);
    this.#watch();
  }

  close(): void {
    this.#closed = true;
    clearTimeout(this.#debounce);
    clearTimeout(this.#poll);
    this.#watcher?.close();
  }

  /** Polls until the dir exists, then watches it until the watch ends. */
  async #watch(): Promise<void> {
    const again = this.#started;
    this.#started = true;
    if (this.#closed) return;
    this.#watched = await dirIdentity(this.#dir);
    if (this.#watched === null) {
      this.#poll = setTimeout(() => this.#watch(), this.#pollMs);
      return;
    }
    let current: Deno.FsWatcher;
    try {
      current = this.#watcher = Deno.watchFs(this.#dir, { recursive: true });
    } catch (error) {
      this.#log.log("warn", `Cannot watch "${this.#dir}": ${(error as Error).message}`, {
        hint: "send SIGHUP to reload the plugins",
      });
      return;
    }
    // Watching anew (the dir appeared, or was replaced): whatever happened before this watch
    // was set up is unseen, so count it as a change.
    if (again) this.#touched();
    this.#poll = setTimeout(() => this.#checkSwap(current), this.#pollMs);
    const failure = await this.#follow(current);
    if (this.#closed) return;
    // `#settled` closes (and forgets) a watch whose dir went away: look for the dir again.
    if (this.#watcher !== current) return void this.#watch();
    this.#watcher = undefined;
    this.#log.log("warn", `Stopped watching "${this.#dir}": ${failure}`, {
      hint: "send SIGHUP to reload the plugins",
    });
  }

  /** Reads the watch's events until it ends; why it ended. */
  async #follow(watcher: Deno.FsWatcher): Promise<string> {
    try {
      // "access" is a file closed after writing, which always follows a "modify". An event
      // naming no path (the kernel's queue overflowed) may hide anything.
      for await (const event of watcher) {
        if (event.kind === "access") continue;
        if (event.paths.length === 0 || event.paths.some(this.#matters)) this.#touched();
      }
      return "the watch ended";
    } catch (error) {
      return (error as Error).message;
    }
  }

  /** The path now naming another directory sends `watcher` no event: look, until it is replaced. */
  async #checkSwap(watcher: Deno.FsWatcher): Promise<void> {
    if (this.#closed || this.#watcher !== watcher) return;
    if ((await dirIdentity(this.#dir)) !== this.#watched) this.#touched();
    this.#poll = setTimeout(() => this.#checkSwap(watcher), this.#pollMs);
  }

  #touched(): void {
    clearTimeout(this.#debounce);
    this.#debounce = setTimeout(() => this.#settled(), this.#debounceMs);
  }

  async #settled(): Promise<void> {
    this.#debounce = undefined;
    if (this.#closed) return;
    // A removed (or replaced) dir leaves its inotify watch silent for good: watch anew.
    if (this.#watcher !== undefined && (await dirIdentity(this.#dir)) !== this.#watched) {
      this.#watcher.close();
      this.#watcher = undefined;
    }
    if (!this.#closed) this.#onChange();
  }
}

/** What the holder passes its loader. */
export interface HolderLoadOptions {
  /** Called with every path the index depends on (as `loadPlugins` does), before it is read. */
  observe(path: string): void;
}

/** Options of {@linkcode IndexHolder}. */
export interface IndexHolderOptions<T> {
  /**
   * Loads the index (the plugin loader). One that calls `observe` is reloaded only for changes
   * to what it observed; one that does not, for any change under the dir.
   */
  load(dir: string, options: HolderLoadOptions): Promise<PluginIndex>;
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

/** What a loaded index depends on. */
interface Dependencies {
  /** Every path the load observed: the dirs it listed, their entries, manifests, scripts. */
  paths: Set<string>;
  /** The plugin dirs: observed, but a new file in one alters nothing. */
  pluginDirs: Set<string>;
}

function warningKey(w: LoadWarning): string {
  return `${w.path}\0${w.line}\0${w.column}\0${w.message}`;
}

/** Holds the current snapshot and reloads it on change; requires `--allow-read`. */
export class IndexHolder<T> {
  /** The plugins dir. */
  readonly dir: string;
  #options: IndexHolderOptions<T>;
  #log: Logger;
  #current: Snapshot<T> | undefined;
  #chain: Promise<void> = Promise.resolve();
  #queued: Promise<void> | null = null;
  #watch: DirWatch | undefined;
  /** What the current index depends on; null when not known (then every change counts). */
  #deps: Dependencies | null = null;
  /** What the load in progress has observed so far. */
  #loading: Set<string> | null = null;

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

  /** Watches first, so no change between the load and the watch is missed; then loads. */
  async start(): Promise<void> {
    if (this.#options.watch !== false) {
      this.#watch = watchDir(this.dir, () => this.reload("change"), {
        log: this.#log,
        matters: (path) => this.#matters(path),
        ...this.#options.watch,
      });
    }
    const { index, observed } = await this.#load();
    this.#swap(index, observed);
    logWarnings(this.#log, index.warnings);
  }

  /**
   * Whether a change to `path` can alter the index: a manifest, an observed path, or a new entry of
   * a listed dir other than a plugin dir (where a hook may write its own files).
   */
  #matters(path: string): boolean {
    const deps = this.#deps;
    if (deps === null || basename(path) === "plugin.yaml") return true;
    const seen = (p: string) => deps.paths.has(p) || this.#loading?.has(p) === true;
    const parent = dirname(path);
    return seen(path) || (seen(parent) && !deps.pluginDirs.has(parent));
  }

  /** Loads the index, noting what it observes. */
  async #load(): Promise<{ index: PluginIndex; observed: Set<string> }> {
    const observed = new Set<string>();
    this.#loading = observed;
    try {
      const index = await this.#options.load(this.dir, { observe: (path) => observed.add(path) });
      return { index, observed };
    } finally {
      this.#loading = null;
    }
  }

  /**
   * Loads the index again; calls while one reload waits to start share it. Resolves when a load
   * started after this call has been applied (or failed and been logged).
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
    let observed: Set<string>;
    try {
      ({ index, observed } = await this.#load());
    } catch (error) {
      // What the failed load depended on is not known: the next change retries.
      this.#deps = null;
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
    this.#swap(index, observed);
    this.#log.log("info", "Reloaded the plugins", {
      reason,
      plugins: index.plugins.length,
      warnings: index.warnings.length,
    });
  }

  #swap(index: PluginIndex, observed: Set<string>): void {
    // A loader that observed nothing says nothing of what it read.
    this.#deps = observed.size === 0
      ? null
      : { paths: observed, pluginDirs: new Set(index.plugins.map((plugin) => plugin.dir)) };
    const previous = this.#current;
    const generation = (previous?.generation ?? 0) + 1;
    this.#current = { index, built: this.#options.build(index), generation };
    if (previous !== undefined) this.#options.retire?.(previous.built);
  }
}
