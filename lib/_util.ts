/**
 * Small helpers shared across lib/: reading a script's JSON answer (the one way every reader
 * words malformed JSON and a wrong field), Go's field matching, a concurrency bound, did-you-mean,
 * sshd's StrictModes checks, the bounded file read, and the version.
 *
 * @module
 */

import { dirname, resolve } from "./dirs.ts";
import type { Schema, SchemaIssue } from "./wire/schema.ts";

/** Parses `text` as JSON: the value, or `malformed JSON: <why>`. */
export function parseJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: `malformed JSON: ${(error as Error).message}` };
  }
}

/** Folds one character as Go's case-insensitive field match does, for the letters of our fields. */
function foldChar(c: string): string {
  if (c === "\u017f") return "s";
  if (c === "\u212a") return "k";
  return c.toLowerCase();
}

function fold(key: string): string {
  let out = "";
  for (const c of key) out += foldChar(c);
  return out;
}

/**
 * The values of `fields` (lower case) in `object`, matched as Go's `encoding/json` matches struct
 * fields, since that is how ty reads handler answers: a key matches a field exactly or, failing
 * that, case-insensitively with Unicode simple folding (`ſ` is an `s`, the Kelvin sign a `k`); the
 * last matching key wins; a `null` leaves the field absent. Other keys are ignored.
 */
export function goFields<F extends string>(
  object: Record<string, unknown>,
  fields: readonly F[],
): Partial<Record<F, unknown>> {
  const out: Partial<Record<F, unknown>> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === null) continue;
    const exact = fields.find((f) => f === key);
    const field = exact ?? fields.find((f) => f === fold(key));
    if (field !== undefined) out[field] = value;
  }
  return out;
}

/** True for a JSON object or YAML map (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** Concatenates `chunks` (whose lengths add up to `length`); a single chunk is returned as is. */
export function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
}

/**
 * A rejected value's first problem as every reader words it: `"path.to.field": message`, or
 * `whole` and the message when the value itself is wrong.
 */
export function issueText(
  issue: { readonly path: readonly PropertyKey[]; readonly message: string },
  whole: string,
): string {
  const path = issue.path.map(String).join(".");
  return `${path === "" ? whole : `"${path}"`}: ${issue.message}`;
}

/** A script's output as a log line shows it: trimmed, at most 500 characters; none when blank. */
export function excerpt(output: string): string | undefined {
  return output.trim().slice(0, 500) || undefined;
}

/**
 * Reads a handler's stdout (known not to be blank) as a `T`: the answer, or why it is not one
 * (`malformed JSON: ...`, `wrong type: "field": ...`, or what `explain` says of the first issue).
 */
export function parseAnswer<T>(
  schema: Schema<T>,
  stdout: string,
  explain: (issue: SchemaIssue, value: unknown) => string | undefined = () => undefined,
): { ok: true; answer: T } | { ok: false; error: string } {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const result = schema.safeParse(json.value);
  if (result.success) return { ok: true, answer: result.data };
  const issue = result.error.issues[0];
  return {
    ok: false,
    error: explain(issue, json.value) ?? `wrong type: ${issueText(issue, "answer")}`,
  };
}

/** Runs `task` once a slot is free. */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * A bound of `max` tasks at once (at least 1), started in the order they arrive: many file checks
 * or hook runs at once, never so many that the file descriptors run out.
 */
export function createLimit(max: number): Limit {
  const slots = Math.max(1, Math.floor(max));
  let running = 0;
  const waiting: (() => void)[] = [];
  return async function limit<T>(task: () => Promise<T>): Promise<T> {
    if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next task, so `running` never overshoots.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/** The candidate closest to `word`, if any is within `max` edits (and is not `word`). */
export function closest(word: string, candidates: readonly string[], max = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const candidate of candidates) {
    if (candidate === word) return undefined;
    if (Math.abs(candidate.length - word.length) > max) continue;
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  // Words here are short keys: an O(len²) table is fine, and long input is no typo of one.
  if (a.length > 64) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
    }
    previous = current;
  }
  return previous[b.length];
}

// sshd's `StrictModes`: what another user could write is not trusted to decide what runs. For a
// plugin dir or script the loader still loads it (as ty does) but warns, and `plugins validate`
// reports it; the daemon refuses a socket dir another user could change.

/**
 * Why `info` (of a plugin dir or script at `path`) is not safe, and the fix; null when it is:
 * writable by group or others, or owned by a user other than the current one or root. Without
 * the user id (`--allow-sys`) only the mode is checked.
 */
export function unsafeMode(
  info: { mode: number | null; uid: number | null },
  path: string,
): { reason: string; hint: string } | null {
  const mode = (info.mode ?? 0) & 0o777;
  if ((mode & 0o022) !== 0) {
    return {
      reason: `is writable by group or others (mode ${mode.toString(8).padStart(4, "0")})`,
      hint: `chmod go-w ${JSON.stringify(path)}`,
    };
  }
  const me = currentUid();
  if (me !== null && info.uid !== null && info.uid !== me && info.uid !== 0) {
    return {
      reason: `is owned by user ${info.uid}, not by the current user (${me}) or root`,
      hint: `chown ${me} ${JSON.stringify(path)}`,
    };
  }
  return null;
}

/**
 * Why someone other than the user (or root) could replace an entry of `dir`, or null when nobody
 * can. Every directory on the way, as written and as resolved, must be owned by the user or root
 * and, when group or others may write to it, sticky (as `/tmp` is, so only an entry's owner can
 * remove or rename it); a symbolic link on the way must be the user's or root's. Requires `--allow-read`.
 */
export function unsafeDirReason(dir: string): string | null {
  const me = currentUid();
  if (me === null) return "the user id is not known";
  let real: string;
  try {
    real = Deno.realPathSync(dir);
  } catch (error) {
    return `"${dir}" cannot be resolved: ${(error as Error).message}`;
  }
  for (const path of new Set([...chain(resolve(dir)), ...chain(real)])) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch (error) {
      return `"${path}" cannot be checked: ${(error as Error).message}`;
    }
    if (info.uid !== null && info.uid !== me && info.uid !== 0) {
      return `"${path}" belongs to another user (uid ${info.uid})`;
    }
    if (info.isSymlink || info.mode === null) continue;
    const sticky = (info.mode & 0o1000) !== 0;
    if ((info.mode & 0o022) !== 0 && !sticky) {
      const mode = (info.mode & 0o7777).toString(8).padStart(4, "0");
      return `"${path}" is writable by group or others and not sticky (mode ${mode})`;
    }
  }
  return null;
}

/**
 * The first symbolic link on the way to what `path` names (the path itself or a directory on
 * it, and the links those lead through) owned by someone other than the user or root, who could
 * point it elsewhere at any time; null when there is none. A path that cannot be followed to
 * the end gives null: reading it fails anyway. Requires `--allow-read`.
 */
export function foreignLink(path: string): { link: string; uid: number } | null {
  const me = currentUid();
  if (me === null) return null;
  let at = path.startsWith("/") ? "/" : Deno.cwd();
  const rest = path.split("/").reverse();
  // At most 40 links, as Linux follows (ELOOP past that).
  for (let links = 0; rest.length > 0;) {
    const name = rest.pop()!;
    if (name === "" || name === ".") continue;
    if (name === "..") {
      at = dirname(at);
      continue;
    }
    const next = at === "/" ? `/${name}` : `${at}/${name}`;
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(next);
    } catch {
      return null;
    }
    if (!info.isSymlink) {
      at = next;
      continue;
    }
    if (info.uid !== null && info.uid !== me && info.uid !== 0) {
      return { link: next, uid: info.uid };
    }
    if (++links > 40) return null;
    let target: string;
    try {
      target = Deno.readLinkSync(next);
    } catch {
      return null;
    }
    // `at` is a real path (every link before was followed), so ".." in the target is its parent.
    if (target.startsWith("/")) at = "/";
    rest.push(...target.split("/").reverse());
  }
  return null;
}

function chain(dir: string): string[] {
  const paths = [dir];
  for (let up = dirname(dir); up !== paths.at(-1); up = dirname(up)) paths.push(up);
  return paths;
}

let uid: number | null | undefined;

// Asked for every plugin dir and script a load checks: the op is looked up once.
function currentUid(): number | null {
  if (uid !== undefined) return uid;
  try {
    return uid = Deno.uid();
  } catch {
    return null;
  }
}

/** The tyhooks version; a test keeps it equal to `deno.json`'s. */
export const VERSION = "0.1.0";

// The one way tyhooks reads a file someone else may have written (a manifest, a task, a hosts
// file, a token, a cache file): it must be a regular file, checked before it is opened, so a
// FIFO, socket or device is an error naming it instead of a hang or an endless read; the read
// is capped, so `--task /dev/urandom` or a 10 GB manifest ends in a clear error instead of
// eating memory; and it takes an abort signal, so SIGINT/SIGTERM ends a read from a stdin that
// never closes. Opening runs off the main thread (`Deno.open` is async), so even an open that
// blocks never keeps the signal handlers from running.
/** The default cap: 1 MiB, like the daemon's request bodies. */
export const MAX_INPUT_BYTES = 1024 * 1024;

/** The caps of SPEC "Trust boundaries": what each kind of input may weigh. */
export const INPUT_CAPS = {
  /** `plugin.yaml`: real ones are a few hundred bytes. */
  manifest: 256 * 1024,
  /** `--task FILE|-`. */
  task: MAX_INPUT_BYTES,
  /** `pick-host --hosts FILE`. */
  hosts: MAX_INPUT_BYTES,
  /** `serve --token-file FILE`. */
  token: 4096,
  /**
   * A tool call on stdin (`tool pre|post --claude` or `--request -`): a Write carries the whole
   * file and a result the whole output, routinely over 1 MiB; past this it fails closed.
   */
  toolCall: 64 * 1024 * 1024,
} as const;

/** Why a bounded read failed: the input is not a regular file, or is larger than the cap. */
export class BoundedReadError extends Error {
  override name = "BoundedReadError";
  /** What was wrong, for callers that word it their own way. */
  readonly reason: "not-regular" | "too-large";
  constructor(message: string, reason: "not-regular" | "too-large") {
    super(message);
    this.reason = reason;
  }
}

/** The owner and mode of the file a read opened (not of whatever its path names now). */
export interface OpenedFile {
  mode: number | null;
  uid: number | null;
}

/** Options of {@linkcode readBounded}. */
export interface ReadBoundedOptions {
  /** Bytes allowed; default {@linkcode MAX_INPUT_BYTES}. */
  maxBytes?: number;
  /** Stops the read (it then rejects with the signal's reason). */
  signal?: AbortSignal;
  /**
   * The caller has seen (lstat) that `path` is a regular file of at most `maxBytes` that no
   * other user can write or replace (so it cannot become a FIFO or grow past the cap by anyone
   * else's doing): it is read whole in one call on the main thread, several times faster than an
   * open, stat, read and close through Deno's thread pool.
   */
  knownRegular?: boolean;
  /** Sees the owner and mode of the file opened, before it is read (a path, not knownRegular). */
  onOpen?: (opened: OpenedFile) => void;
}

/**
 * Reads `path` (`-` = stdin) as UTF-8 text, at most `maxBytes`; a path must name a regular file
 * (symlinks followed). Requires `--allow-read` for a path.
 *
 * @throws {BoundedReadError} When the path is not a regular file, or the input is over the cap.
 * @throws {Deno.errors.NotFound} And the other file-system errors, unchanged.
 */
export async function readBounded(path: string, options: ReadBoundedOptions = {}): Promise<string> {
  return new TextDecoder().decode(await readBoundedBytes(path, options));
}

/** {@linkcode readBounded}, returning the bytes undecoded (for callers that refuse bad UTF-8). */
export async function readBoundedBytes(
  path: string,
  options: ReadBoundedOptions = {},
): Promise<Uint8Array> {
  const maxBytes = options.maxBytes ?? MAX_INPUT_BYTES;
  options.signal?.throwIfAborted();
  if (path !== "-" && options.knownRegular) {
    const bytes = Deno.readFileSync(path);
    if (bytes.length > maxBytes) throw tooLarge(maxBytes);
    return bytes;
  }
  if (path !== "-") {
    // stat, not open, decides first: opening a FIFO would wait for a writer.
    checkRegular(Deno.statSync(path), maxBytes);
    // Only someone who can change its dir can put a FIFO there after the stat: then the open goes
    // through node:fs, with O_NONBLOCK. Loading node:fs costs a call about 50 ms, so only then.
    if (mayBeReplaced(path)) {
      return await readOpenFile(path, maxBytes, options.signal, options.onOpen);
    }
    const file = await Deno.open(path, { read: true });
    try {
      options.signal?.throwIfAborted();
      // What was opened may not be what was checked: check the open file itself.
      const info = checkRegular(file.statSync(), maxBytes);
      options.onOpen?.(info);
      return readRegular((buffer) => file.readSync(buffer), maxBytes, info.size);
    } finally {
      file.close();
    }
  }
  const reader = Deno.stdin.readable.getReader();
  const onAbort = () => reader.cancel().catch(() => {});
  options.signal?.addEventListener("abort", onAbort, { once: true });
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (true) {
      const { done, value } = await reader.read();
      options.signal?.throwIfAborted();
      if (done) break;
      total += value.length;
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(value);
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => {});
  }
  return concat(chunks, total);
}

/**
 * Whether someone other than the user (or root) could replace `path` or, if a link, its target,
 * or point a link on the way elsewhere.
 */
function mayBeReplaced(path: string): boolean {
  try {
    return unsafeDirReason(dirname(resolve(path))) !== null ||
      unsafeDirReason(dirname(Deno.realPathSync(path))) !== null || foreignLink(path) !== null;
  } catch {
    return true;
  }
}

/**
 * Reads `path`, which a stat found to be a regular file, checking the file it opens: whoever can
 * write the dir can put a FIFO there after the stat. Opened with O_NONBLOCK, a FIFO opens at once
 * (and is refused) instead of waiting for a writer in one of Deno's threads, where no signal
 * reaches (`Deno.open` has no such flag; `node:fs` passes it on).
 */
export async function readOpenFile(
  path: string,
  maxBytes: number,
  signal?: AbortSignal,
  onOpen?: (opened: OpenedFile) => void,
): Promise<Uint8Array> {
  const fs = await import("node:fs");
  const fd = fs.openSync(path, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
  try {
    signal?.throwIfAborted();
    const info = fs.fstatSync(fd);
    if (!info.isFile()) {
      const kind = fileKind({
        isDirectory: info.isDirectory(),
        isFifo: info.isFIFO(),
        isSocket: info.isSocket(),
        isCharDevice: info.isCharacterDevice(),
        isBlockDevice: info.isBlockDevice(),
        isSymlink: false,
      });
      throw new BoundedReadError(`not a regular file (${kind})`, "not-regular");
    }
    if (info.size > maxBytes) throw tooLarge(maxBytes);
    onOpen?.({ mode: info.mode, uid: info.uid });
    return readRegular((buffer) => fs.readSync(fd, buffer) || null, maxBytes, info.size);
  } finally {
    fs.closeSync(fd);
  }
}

function checkRegular(info: Deno.FileInfo, maxBytes: number): Deno.FileInfo {
  if (!info.isFile) {
    throw new BoundedReadError(`not a regular file (${fileKind(info)})`, "not-regular");
  }
  if (info.size > maxBytes) throw tooLarge(maxBytes);
  return info;
}

// A regular file is read synchronously: its reads never wait, and a stream per file (a few
// hundred microseconds each) was most of the cost of loading 1,000 manifests.
function readRegular(
  readSync: (buffer: Uint8Array) => number | null,
  maxBytes: number,
  size: number,
): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  // Sized by the stat (a 64 KiB buffer per manifest was most of a cold load's garbage); a file
  // that grew since is read on in more chunks.
  const buffer = new Uint8Array(Math.min(maxBytes + 1, 64 * 1024, Math.max(1024, size + 1)));
  while (true) {
    const n = readSync(buffer);
    if (n === null) break;
    total += n;
    if (total > maxBytes) throw tooLarge(maxBytes);
    chunks.push(buffer.slice(0, n));
  }
  return concat(chunks, total);
}

function tooLarge(maxBytes: number): BoundedReadError {
  return new BoundedReadError(`larger than ${maxBytes} bytes`, "too-large");
}

/** What kind of file `info` describes, for "not a regular file (a FIFO)". */
export function fileKind(
  info: Pick<
    Deno.FileInfo,
    "isDirectory" | "isFifo" | "isSocket" | "isCharDevice" | "isBlockDevice" | "isSymlink"
  >,
): string {
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a FIFO";
  if (info.isSocket) return "a socket";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSymlink) return "a symlink";
  return "not a file";
}
