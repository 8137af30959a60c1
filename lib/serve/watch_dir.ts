/**
 * Watching the plugins dir for changes, debounced. The dir may not exist (a missing plugins dir
 * holds no plugins): then it is polled for, every `pollMs`, rather than watching its parent,
 * which may be the whole of `~/.config`. When it appears, or disappears while watched, that is a
 * change too, and watching resumes in the matching mode.
 *
 * @module
 */

import { type Logger, silentLogger } from "../log.ts";

/**
 * Options of {@linkcode watchDir}: how the daemon watches the plugins dir.
 *
 * @example
 * ```ts
 * import { startDaemon } from "./server.ts";
 * import type { WatchDirOptions } from "./watch_dir.ts";
 * const dir = await Deno.makeTempDir();
 * const watch: WatchDirOptions = { debounceMs: 50, pollMs: 200 };
 * const daemon = await startDaemon({
 *   listen: { transport: "unix", path: `${dir}/tyhooks.sock` },
 *   pluginsDir: `${dir}/plugins`,
 *   watch,
 * });
 * await daemon.stop();
 * ```
 */
export interface WatchDirOptions {
  /** Quiet time after the last change before `onChange` runs; default 200 ms. */
  debounceMs?: number;
  /** How often a missing dir is looked for; default 1000 ms. */
  pollMs?: number;
  /** Where a watch that cannot be set up is reported; default silent. */
  log?: Logger;
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
 *
 * Requires `--allow-read`.
 *
 * @param dir The directory (recursively).
 * @param onChange Called after each quiet period following changes.
 * @param options Debounce, poll interval, logger.
 * @returns The watch, to close.
 * @example
 * ```ts
 * import { watchDir } from "./watch_dir.ts";
 * const dir = await Deno.makeTempDir();
 * const changed = Promise.withResolvers<void>();
 * const watch = watchDir(dir, () => changed.resolve(), { debounceMs: 50 });
 * setTimeout(() => Deno.writeTextFile(`${dir}/x`, "1"), 100);
 * await changed.promise;
 * watch.close();
 * ```
 */
export function watchDir(
  dir: string,
  onChange: () => void,
  options: WatchDirOptions = {},
): DirWatch {
  const debounceMs = options.debounceMs ?? 200;
  const pollMs = options.pollMs ?? 1000;
  const log = options.log ?? silentLogger;
  let closed = false;
  let watcher: Deno.FsWatcher | undefined;
  let watched: string | null = null;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  let poll: ReturnType<typeof setTimeout> | undefined;

  const settled = async () => {
    debounce = undefined;
    if (closed) return;
    // A removed (or replaced) dir leaves its inotify watch silent for good: watch anew.
    if (watcher !== undefined && (await dirIdentity(dir)) !== watched) {
      watcher.close();
      watcher = undefined;
    }
    if (!closed) onChange();
  };

  const touched = () => {
    clearTimeout(debounce);
    debounce = setTimeout(settled, debounceMs);
  };

  let started = false;
  const watch = async () => {
    const again = started;
    started = true;
    if (closed) return;
    watched = await dirIdentity(dir);
    if (watched === null) {
      poll = setTimeout(watch, pollMs);
      return;
    }
    let current: Deno.FsWatcher;
    try {
      current = watcher = Deno.watchFs(dir, { recursive: true });
    } catch (error) {
      log.log("warn", `Cannot watch "${dir}": ${(error as Error).message}`, {
        hint: "send SIGHUP to reload the plugins",
      });
      return;
    }
    // Watching anew (the dir appeared, or was replaced): whatever happened before this watch
    // was set up is unseen, so count it as a change.
    if (again) touched();
    let failure = "the watch ended";
    try {
      // "access" is a file closed after writing, which always follows a "modify".
      for await (const event of current) if (event.kind !== "access") touched();
    } catch (error) {
      failure = (error as Error).message;
    }
    if (closed) return;
    // `settled` closes (and forgets) a watch whose dir went away: look for the dir again.
    if (watcher !== current) return void watch();
    watcher = undefined;
    log.log("warn", `Stopped watching "${dir}": ${failure}`, {
      hint: "send SIGHUP to reload the plugins",
    });
  };

  watch();
  return {
    close() {
      closed = true;
      clearTimeout(debounce);
      clearTimeout(poll);
      watcher?.close();
    },
  };
}
