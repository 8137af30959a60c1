/**
 * One spool entry on disk, `<ms>-<seq>-<random>.json` (names sort in acceptance order): written
 * durably before the caller is told it was accepted, read back only when it passes the trust
 * rules. Other runners rename and remove entries at any time, so a file or dir that vanished is
 * nothing to do, here and in the rest of the spool.
 *
 * @module
 */

import { join } from "../paths.ts";
import { checkPrivateFile, readBoundedBytes } from "../fs.ts";
import { decodeJson, isRecord } from "../wire/json.ts";

/** One entry at most: a detached run's whole work document. */
export const MAX_ENTRY_BYTES = 16 * 1024 * 1024;

export const ENTRY = /^\d{13}-\d{6}-[0-9a-f]{8}\.json$/;
/** A file set aside: `<entry>.<reason>`. */
export const SET_ASIDE = /^\d{13}-\d{6}-[0-9a-f]{8}\.json\.[a-z]+$/;

/**
 * What an entry holds, enough to run it again anywhere: the command line a `--detach` run
 * executes, or a request a daemon accepted with the dirs it served.
 */
export type SpoolWork =
  | { what: string; args: string[] }
  | {
    what: string;
    request: { path: string; body: unknown };
    plugins_dir: string;
    hooks_dir: string | null;
  };

/** A spool file's content: {@linkcode SpoolWork} with its format and when it was accepted. */
export type SpoolDoc = SpoolWork & { tyhooks_spool: 1; accepted_at: string };

const encoder = new TextEncoder();
let sequence = 0;

/** `work` as the bytes of its entry, accepted now. */
export function encodeEntry(work: SpoolWork): Uint8Array {
  const doc: SpoolDoc = { tyhooks_spool: 1, accepted_at: new Date().toISOString(), ...work };
  return encoder.encode(JSON.stringify(doc) + "\n");
}

/** A new entry's name, after every name this process gave before. */
export function newName(): string {
  sequence = (sequence + 1) % 1_000_000;
  const time = String(Date.now()).padStart(13, "0");
  return `${time}-${String(sequence).padStart(6, "0")}-${crypto.randomUUID().slice(0, 8)}.json`;
}

/** Writes entries durably; concurrent writers into one dir share its fsync. */
export class EntryWriter {
  #syncs = new Map<string, DirSync>();

  /** Writes `bytes` as the entry `name` in `dir`, and returns once it is on disk. */
  async write(dir: string, name: string, bytes: Uint8Array): Promise<void> {
    const temp = join(dir, `.${name}.${crypto.randomUUID()}.tmp`);
    try {
      const file = Deno.openSync(temp, { write: true, createNew: true, mode: 0o600 });
      try {
        for (let at = 0; at < bytes.length;) at += file.writeSync(bytes.subarray(at));
        await file.syncData();
      } finally {
        file.close();
      }
      Deno.renameSync(temp, join(dir, name));
    } catch (error) {
      removeQuietly(temp);
      throw error;
    }
    // The rename is on disk only once the directory is.
    let sync = this.#syncs.get(dir);
    if (sync === undefined) this.#syncs.set(dir, sync = new DirSync(dir));
    await sync.sync();
  }

  /** Closes the dirs kept open for their syncs. */
  async close(): Promise<void> {
    for (const sync of this.#syncs.values()) await sync.close();
    this.#syncs.clear();
  }
}

/**
 * One directory's fsync shared by concurrent writers: a rename after the sync in progress began
 * waits for the next one, which every writer waiting then shares.
 */
class DirSync {
  #dir: string;
  #file: Promise<Deno.FsFile | null> | undefined;
  #running: Promise<void> | null = null;
  #next: Promise<void> | null = null;

  constructor(dir: string) {
    this.#dir = dir;
  }

  sync(): Promise<void> {
    this.#next ??= (this.#running ?? Promise.resolve()).then(() => {
      this.#next = null;
      const running = this.#running = this.#syncOnce();
      running.finally(() => {
        if (this.#running === running) this.#running = null;
      });
      return running;
    });
    return this.#next;
  }

  async close(): Promise<void> {
    (await this.#file)?.close();
    this.#file = undefined;
  }

  // Best effort: a file system that cannot sync a directory still has the file synced.
  async #syncOnce(): Promise<void> {
    try {
      const file = await (this.#file ??= Deno.open(this.#dir, { read: true }).catch(() => null));
      await file?.sync();
    } catch {
      // Nothing better to do: the entry is written either way.
    }
  }
}

/**
 * Why a spool file may not run (`unsafe`: fails the trust rules; `corrupt`: not a spool
 * document; `gone`: finished meanwhile), or the document it holds.
 */
export async function readEntry(
  dir: string,
  name: string,
): Promise<{ doc: SpoolDoc; bytes: number } | { reason: string; problem: string }> {
  const path = join(dir, name);
  const unsafe = checkPrivateFile(path, MAX_ENTRY_BYTES, "the spool file");
  if (unsafe !== null) {
    // Finished by its runner between the listing and now: not a problem at all.
    if (unsafe.startsWith("there is no")) return { reason: "gone", problem: unsafe };
    return { reason: "unsafe", problem: unsafe };
  }
  let bytes: Uint8Array;
  try {
    // checkPrivateFile saw a regular file in a dir only the user can write.
    bytes = await readBoundedBytes(path, { maxBytes: MAX_ENTRY_BYTES, knownRegular: true });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return { reason: "gone", problem: "finished" };
    return { reason: "corrupt", problem: `not a spool document: ${(error as Error).message}` };
  }
  const read = decodeJson(bytes);
  if (!read.ok) return { reason: "corrupt", problem: `not a spool document: ${read.error}` };
  const wrong = docProblem(read.value);
  if (wrong !== null) return { reason: "corrupt", problem: `not a spool document: ${wrong}` };
  return { doc: read.value as SpoolDoc, bytes: bytes.length };
}

// The shape SpoolDoc promises; a field named when it is wrong.
function docProblem(doc: unknown): string | null {
  if (!isRecord(doc)) return "not an object";
  if (doc.tyhooks_spool !== 1) return '"tyhooks_spool" is not 1';
  if (typeof doc.accepted_at !== "string") return '"accepted_at" is not a string';
  if (typeof doc.what !== "string") return '"what" is not a string';
  if (doc.args !== undefined) {
    const ok = Array.isArray(doc.args) && doc.args.every((a) => typeof a === "string");
    return ok ? null : '"args" is not a list of strings';
  }
  const request = doc.request;
  if (!isRecord(request)) return 'neither "args" nor "request"';
  if (typeof request.path !== "string") return '"request.path" is not a string';
  if (typeof doc.plugins_dir !== "string") return '"plugins_dir" is not a string';
  if (doc.hooks_dir !== null && typeof doc.hooks_dir !== "string") {
    return '"hooks_dir" is not a string or null';
  }
  return null;
}

export function readDirSafe(dir: string): Deno.DirEntry[] {
  try {
    return [...Deno.readDirSync(dir)];
  } catch {
    return [];
  }
}

export function removeQuietly(path: string): void {
  try {
    Deno.removeSync(path);
  } catch {
    // Gone already.
  }
}
