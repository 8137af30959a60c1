/**
 * The spool (lib/README.md, Daemon, "Nothing accepted is lost"): fire-and-forget work kept on disk,
 * one durable file per entry (entry.ts), from acceptance until every hook of it has finished or
 * timed out. A runner (a daemon, `spool run`, a detached run) claims an entry by renaming it into
 * its own `run-<id>/`, whose lock it holds while it lives: a rename succeeds once, and the kernel
 * drops a dead runner's lock, so its entries are free to claim again (at-least-once).
 *
 * ```
 * <state>/tyhooks/spool/
 *   1767225600000-000001-3fa2c1d0.json     waiting for a runner (from --detach)
 *   run-9c1e0b7a2d4f6e81/.lock             a runner's lock
 *   run-9c1e0b7a2d4f6e81/1767225600004-…   claimed by that runner
 *   1767225600002-000003-77aa01ee.json.corrupt   set aside: not a spool document
 * ```
 *
 * @module
 */

import { dirname, join, stateDir } from "../paths.ts";
import { RunError } from "../errors.ts";
import { quoted } from "../text.ts";
import { type Logger, RateLog, silentLogger } from "../log.ts";
import { checkPrivateDir, unsafeDirReason } from "../fs.ts";
import {
  encodeEntry,
  ENTRY,
  EntryWriter,
  MAX_ENTRY_BYTES,
  newName,
  readDirSafe,
  readEntry,
  removeQuietly,
  SET_ASIDE,
  type SpoolDoc,
  type SpoolWork,
} from "./entry.ts";
import { isLive, makeRunnerDir, removeRunnerDir, RUNNER } from "./runner_dir.ts";

export type { SpoolDoc, SpoolWork };

/** Default bound on the entries a spool holds. */
export const DEFAULT_SPOOL_ENTRIES = 10_000;
/** Default bound on the bytes a spool holds: 64 MiB. */
export const DEFAULT_SPOOL_BYTES = 64 * 1024 * 1024;
/** A temp file older than this was left by a writer that died before its rename. */
const TEMP_MAX_AGE_MS = 10 * 60 * 1000;

/** The spool dir: `<state>/tyhooks/spool` (`$XDG_STATE_HOME`, else `$HOME/.local/state`). */
export function spoolDir(): string {
  return join(stateDir(), "tyhooks", "spool");
}

/** An entry this process holds (wrote into its runner dir, or claimed). */
export interface SpoolEntry {
  name: string;
  bytes: number;
}

/** An entry found by {@linkcode Spool.scan}. */
export interface FoundEntry extends SpoolEntry {
  /** `pending`: nobody runs it; `running`: a live runner holds it. */
  state: "pending" | "running";
  /** The dir it lies in (the spool, or a runner's dir). */
  dir: string;
  doc: SpoolDoc;
}

/** A file set aside: renamed to `<name>.<reason>` in the spool dir, never run. */
export interface SetAside {
  name: string;
  reason: string;
}

/** Why an entry was refused: the spool is at its bound. The daemon answers 503. */
export class SpoolFullError extends RunError {
  override name = "SpoolFullError";
}

/** Options of {@linkcode Spool.open}. */
export interface SpoolOptions {
  /** Entries held at most; default 10,000. */
  maxEntries?: number;
  /** Bytes held at most; default 64 MiB. */
  maxBytes?: number;
  /** Where set-aside files and refusals are logged. */
  log?: Logger;
}

/** The spool dir, and this process's runner in it. */
export class Spool {
  /** The spool dir. */
  readonly dir: string;
  readonly #maxEntries: number;
  readonly #maxBytes: number;
  readonly #log: Logger;
  #runner: Promise<{ dir: string; lock: Deno.FsFile }> | undefined;
  #held = new Map<string, number>();
  #heldBytes = 0;
  #writer = new EntryWriter();
  #refusals: RateLog;
  #closed = false;

  private constructor(dir: string, options: SpoolOptions) {
    this.dir = dir;
    this.#maxEntries = options.maxEntries ?? DEFAULT_SPOOL_ENTRIES;
    this.#maxBytes = options.maxBytes ?? DEFAULT_SPOOL_BYTES;
    this.#log = options.log ?? silentLogger;
    // A burst of refusals gives one line a second; the last of them are counted when it ends.
    this.#refusals = new RateLog(this.#log, "Spool full: requests refused", { trailing: true });
  }

  /**
   * Opens the spool (default {@linkcode spoolDir}), made 0700; a `RunError` when another user could
   * write it. Requires `--allow-read`, `--allow-write`, `--allow-sys` (the user id), `--allow-env`.
   */
  static open(dir: string | undefined, options: SpoolOptions = {}): Spool {
    const path = dir ?? defaultDir();
    try {
      Deno.mkdirSync(path, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new RunError(`Cannot make the spool dir "${path}": ${(error as Error).message}`);
    }
    const unusable = spoolDirProblem(path);
    if (unusable !== null) throw unusable;
    // Tasks are private: readable by nobody else either.
    const mode = Deno.lstatSync(path).mode;
    if (mode !== null && (mode & 0o077) !== 0) Deno.chmodSync(path, 0o700);
    return new Spool(path, options);
  }

  /**
   * {@linkcode Spool.open}, or null when the spool dir does not exist: what only lists or runs the
   * spool does not make it (a background run whose state dir was removed meanwhile, its caller
   * gone, would make it again and leave it behind).
   */
  static openExisting(dir: string | undefined, options: SpoolOptions = {}): Spool | null {
    const path = dir ?? defaultDir();
    try {
      Deno.lstatSync(path);
    } catch (error) {
      if (error instanceof Deno.errors.NotFound) return null;
      throw new RunError(`Cannot use the spool dir "${path}": ${(error as Error).message}`);
    }
    return Spool.open(path, options);
  }

  /** The entries this process holds and their bytes: a daemon's accepted events not yet run. */
  get depth(): { entries: number; bytes: number } {
    return { entries: this.#held.size, bytes: this.#heldBytes };
  }

  /** Requests refused so far because the spool was full. */
  get refused(): number {
    return this.#refusals.count;
  }

  /**
   * Writes `work` durably (a {@linkcode SpoolFullError} past the spool's bounds, a `RunError` for
   * an entry over {@linkcode MAX_ENTRY_BYTES} or nested too deeply to write). With `claim`
   * (default) it goes straight into this process's runner dir, held; without, into the spool for
   * any runner.
   */
  async add(work: SpoolWork, options: { claim?: boolean } = {}): Promise<SpoolEntry> {
    const claim = options.claim ?? true;
    const what = quoted(work.what);
    let bytes: Uint8Array;
    try {
      bytes = encodeEntry(work);
    } catch (error) {
      // JSON.stringify recurses (off V8's fast path for plain data): a body nested some ten
      // thousand deep, such as an agent's tool input, runs out of stack.
      if (!(error instanceof RangeError && /call stack/.test(error.message))) throw error;
      throw new RunError(
        `Cannot spool ${what}: it nests too deeply to be written (${error.message})`,
      );
    }
    if (bytes.length > MAX_ENTRY_BYTES) {
      throw new RunError(
        `Cannot spool ${what}: its ${bytes.length} bytes are over the ${MAX_ENTRY_BYTES} bytes one entry may hold`,
      );
    }
    const cannotWrite = (error: unknown) =>
      new RunError(
        `Cannot spool ${what}: the spool ${quoted(this.dir)} cannot be written: ${
          (error as Error).message
        }`,
      );
    let dir = this.dir;
    try {
      if (claim) dir = (await this.#runnerDir()).dir;
    } catch (error) {
      throw cannotWrite(error);
    }
    const usage = claim ? this.depth : this.usage();
    if (
      this.#closed || usage.entries >= this.#maxEntries ||
      usage.bytes + bytes.length > this.#maxBytes
    ) {
      this.#refusals.note(usage, `Spool full: refused ${what}`);
      throw new SpoolFullError(
        this.#closed
          ? `Cannot spool ${what}: the spool is closed`
          : `Cannot spool ${what}: the spool is full (${usage.entries} entries, ${usage.bytes} bytes)`,
      );
    }
    const name = newName();
    // Counted before the write, so concurrent adds see it.
    if (claim) this.#hold(name, bytes.length);
    try {
      await this.#writer.write(dir, name, bytes);
    } catch (error) {
      if (claim) this.#unhold(name);
      throw cannotWrite(error);
    }
    return { name, bytes: bytes.length };
  }

  /** What the whole spool holds now, every runner's entries included. */
  usage(): { entries: number; bytes: number } {
    let entries = 0;
    let bytes = 0;
    const count = (dir: string) => {
      for (const item of readDirSafe(dir)) {
        if (!ENTRY.test(item.name)) continue;
        try {
          bytes += Deno.lstatSync(join(dir, item.name)).size;
          entries++;
        } catch {
          // Finished meanwhile.
        }
      }
    };
    count(this.dir);
    for (const item of readDirSafe(this.dir)) {
      if (RUNNER.test(item.name) && item.isDirectory) count(join(this.dir, item.name));
    }
    return { entries, bytes };
  }

  /**
   * The entries of other runners and none, in acceptance order (`pending`: free to claim; with
   * `running`, those live runners hold). A file that is not a safe spool document is set aside and
   * listed; with `setAside: false` nothing is renamed. Dead writers' leftovers are removed.
   */
  async scan(
    options: { running?: boolean; setAside?: boolean; only?: ReadonlySet<string> } = {},
  ): Promise<{ entries: FoundEntry[]; setAside: SetAside[] }> {
    const mine = (await this.#madeRunnerDir())?.dir ?? null;
    const entries: FoundEntry[] = [];
    const aside: SetAside[] = [];
    const look = async (dir: string, state: FoundEntry["state"], canSetAside: boolean) => {
      for (const item of readDirSafe(dir)) {
        if (!ENTRY.test(item.name) || options.only?.has(item.name) === false) continue;
        const read = await readEntry(dir, item.name);
        if ("reason" in read && read.reason === "gone") continue;
        if ("doc" in read) {
          entries.push({ name: item.name, bytes: read.bytes, state, dir, doc: read.doc });
        } else if (options.setAside !== false && canSetAside) {
          aside.push(this.#setAside(dir, item.name, read.reason, read.problem));
        } else {
          aside.push({ name: item.name, reason: read.reason });
        }
      }
    };
    for (const item of readDirSafe(this.dir)) {
      if (item.name.startsWith(".")) this.#removeIfStale(item.name);
      else if (options.setAside === false && SET_ASIDE.test(item.name)) {
        // Only a listing shows what earlier scans set aside; a run reports what it set aside.
        aside.push({ name: item.name, reason: item.name.slice(item.name.indexOf(".json.") + 6) });
      }
    }
    await look(this.dir, "pending", true);
    for (const item of readDirSafe(this.dir)) {
      if (!RUNNER.test(item.name)) continue;
      const dir = join(this.dir, item.name);
      if (dir === mine) continue;
      const unsafe = checkPrivateDir(dir, "the runner dir");
      if (!unsafe.ok) {
        if (options.setAside !== false) {
          aside.push(this.#setAside(this.dir, item.name, "unsafe", unsafe.reason));
        }
        continue;
      }
      if (isLive(dir)) {
        if (options.running) await look(dir, "running", false);
        continue;
      }
      // Its writes that never got their name were never accepted.
      for (const temp of readDirSafe(dir)) {
        if (temp.name.endsWith(".tmp")) removeQuietly(join(dir, temp.name));
      }
      const before = entries.length + aside.length;
      await look(dir, "pending", true);
      if (entries.length + aside.length === before) removeRunnerDir(dir);
    }
    entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
    return { entries, setAside: aside };
  }

  /** Moves `entry` into this process's runner dir: null when another runner took it first. */
  async claim(entry: FoundEntry): Promise<SpoolEntry | null> {
    const { dir } = await this.#runnerDir();
    if (entry.dir !== dir) {
      try {
        await Deno.rename(join(entry.dir, entry.name), join(dir, entry.name));
      } catch (error) {
        if (error instanceof Deno.errors.NotFound) return null;
        throw error;
      }
      // The last entry of a dead runner: its dir goes too.
      if (entry.dir !== this.dir) removeRunnerDir(entry.dir);
    }
    this.#hold(entry.name, entry.bytes);
    return { name: entry.name, bytes: entry.bytes };
  }

  /** Removes a held entry: every hook of it has finished or timed out. */
  async finish(entry: SpoolEntry): Promise<void> {
    if (!this.#held.has(entry.name)) return;
    const { dir } = await this.#runnerDir();
    this.#unhold(entry.name);
    removeQuietly(join(dir, entry.name));
  }

  /** Removes an entry added without `claim`, unless a runner has taken it since. */
  async discard(entry: SpoolEntry): Promise<void> {
    await Deno.remove(join(this.dir, entry.name)).catch(() => {});
  }

  /** Gives a held entry back to the spool, for the next runner. */
  async release(entry: SpoolEntry): Promise<void> {
    if (!this.#held.has(entry.name)) return;
    const { dir } = await this.#runnerDir();
    this.#unhold(entry.name);
    await Deno.rename(join(dir, entry.name), join(this.dir, entry.name)).catch(() => {});
  }

  /** Sets a held entry aside as `reason` (e.g. `failed`), logged with `why`; it never runs. */
  async setAside(entry: SpoolEntry, reason: string, why: string): Promise<void> {
    if (!this.#held.has(entry.name)) return;
    const { dir } = await this.#runnerDir();
    this.#unhold(entry.name);
    this.#setAside(dir, entry.name, reason, why);
  }

  /** Gives every held entry back and removes this runner's dir; adds are refused from now on. */
  async close(): Promise<void> {
    this.#closed = true;
    this.#refusals.flush();
    await this.#writer.close();
    const runner = await this.#madeRunnerDir();
    if (runner === null) return;
    const { dir, lock } = runner;
    for (const name of [...this.#held.keys()]) await this.release({ name, bytes: 0 });
    removeRunnerDir(dir);
    lock.close();
  }

  #hold(name: string, bytes: number): void {
    this.#held.set(name, bytes);
    this.#heldBytes += bytes;
  }

  #unhold(name: string): void {
    this.#heldBytes -= this.#held.get(name) ?? 0;
    this.#held.delete(name);
  }

  #runnerDir(): Promise<{ dir: string; lock: Deno.FsFile }> {
    if (this.#runner === undefined) {
      const making = makeRunnerDir(this.dir);
      this.#runner = making;
      // A failed attempt is forgotten: the next call tries again, once the spool is writable.
      making.catch(() => {
        if (this.#runner === making) this.#runner = undefined;
      });
    }
    return this.#runner;
  }

  /** This process's runner dir, or null when it has none (never made, or making it failed). */
  async #madeRunnerDir(): Promise<{ dir: string; lock: Deno.FsFile } | null> {
    return await this.#runner?.catch(() => null) ?? null;
  }

  #setAside(dir: string, name: string, reason: string, why: string): SetAside {
    const target = join(this.dir, `${name}.${reason}`);
    try {
      Deno.renameSync(join(dir, name), target);
      this.#log.log("warn", `Spool file "${name}" set aside: ${why}`, { now: target });
    } catch (error) {
      this.#log.log("warn", `Spool file "${name}" cannot be set aside: ${why}`, {
        error: (error as Error).message,
      });
    }
    return { name, reason };
  }

  #removeIfStale(name: string): void {
    if (!name.endsWith(".tmp")) return;
    const path = join(this.dir, name);
    try {
      const info = Deno.lstatSync(path);
      if (Date.now() - (info.mtime?.getTime() ?? Date.now()) < TEMP_MAX_AGE_MS) return;
      // A runner dir that never got its name holds no entry.
      Deno.removeSync(path, { recursive: info.isDirectory });
    } catch {
      // Gone already, or not ours to remove: harmless either way.
    }
  }
}

/**
 * How many entries the spool holds, by state; reads only. A `RunError` when the spool dir exists
 * but cannot be used, as every command that opens it would say, even when it holds nothing.
 */
export async function spoolCounts(
  dir?: string,
): Promise<{ pending: number; running: number; set_aside: number }> {
  const path = dir ?? defaultDir();
  const none = { pending: 0, running: 0, set_aside: 0 };
  try {
    Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return none;
  }
  const unusable = spoolDirProblem(path);
  if (unusable !== null) throw unusable;
  if (readDirSafe(path).length === 0) return none;
  const found = await Spool.open(path).scan({ running: true, setAside: false });
  const pending = found.entries.filter((e) => e.state === "pending").length;
  return { pending, running: found.entries.length - pending, set_aside: found.setAside.length };
}

/**
 * Why the spool dir at `path` cannot be used, with the fix, or null: it must be the user's own dir
 * that nobody else can write, and whoever can write a dir above it could move it away and put one
 * of theirs there.
 */
function spoolDirProblem(path: string): RunError | null {
  const state = checkPrivateDir(path, "the spool dir");
  if (!state.ok) {
    return new RunError(`Cannot use the spool: ${state.reason}`, {
      hint: `hint: chown $(id -u) "${path}" && chmod 700 "${path}"`,
    });
  }
  const above = unsafeDirReason(dirname(path));
  if (above !== null) {
    return new RunError(`Cannot use the spool: ${above}`, {
      hint: `hint: make every dir above "${path}" yours and writable only by you (chmod go-w)`,
    });
  }
  return null;
}

function defaultDir(): string {
  try {
    return spoolDir();
  } catch (error) {
    throw new RunError(`Cannot find the spool dir: ${(error as Error).message}`, {
      hint: "hint: set XDG_STATE_HOME or HOME",
    });
  }
}
