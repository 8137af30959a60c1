/**
 * Files and paths: how tyhooks reads files someone else may have written, and when it trusts them
 * (sshd's `StrictModes`: what another user could write does not decide what runs). And POSIX path
 * arithmetic with `node:path`'s results (a test compares them), as importing `node:path` makes
 * Deno evaluate about 20 Node modules, milliseconds of every start; Linux and macOS only, so `/`
 * is the only separator.
 *
 * @module
 */

import { dirname, resolve } from "./paths.ts";
import { quoted } from "./text.ts";

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
   * The caller saw (lstat) a regular file within the cap that no other user can write or replace:
   * read whole on the main thread, several times faster than through Deno's thread pool.
   */
  knownRegular?: boolean;
  /** Sees the owner and mode of the file opened, before it is read (a path, not knownRegular). */
  onOpen?: (opened: OpenedFile) => void;
}

/**
 * Reads `path` (`-` = stdin) as UTF-8, the one way tyhooks reads a file someone else may have
 * written: a regular file (checked before it is opened, so a FIFO is an error, not a hang), at
 * most `maxBytes` (`--task /dev/urandom` is a clear error), abortable (a stdin that never closes),
 * opened off the main thread so signal handlers keep running. Throws {@linkcode BoundedReadError},
 * or a file-system error unchanged. Requires `--allow-read` for a path.
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
  if (path === "-") return await readToEnd(Deno.stdin, maxBytes, options.signal);
  if (options.knownRegular) {
    const bytes = Deno.readFileSync(path);
    if (bytes.length > maxBytes) throw tooLarge(maxBytes);
    return bytes;
  }
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

/**
 * All that `reader` gives until its end, at most `maxBytes` (more is a {@linkcode BoundedReadError}),
 * given up when `signal` aborts. Through `read` rather than a `readable` stream, whose first use
 * costs a call about 8 ms; a read given up on stays pending (stdin is read once, a connection
 * closed).
 */
export async function readToEnd(
  reader: { read(buffer: Uint8Array): Promise<number | null> },
  maxBytes: number,
  signal?: AbortSignal,
): Promise<Uint8Array> {
  let onAbort = () => {};
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal?.reason);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
  aborted.catch(() => {}); // Settled by the race below, or by nobody once done.
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (true) {
      const chunk = new Uint8Array(64 * 1024);
      const n = await Promise.race([reader.read(chunk), aborted]);
      if (n === null) break;
      total += n;
      if (total > maxBytes) throw tooLarge(maxBytes);
      chunks.push(chunk.subarray(0, n));
    }
  } finally {
    signal?.removeEventListener("abort", onAbort);
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
 * Reads `path`, a regular file at its stat, checking what it opens: a FIFO put there since opens
 * at once with O_NONBLOCK (`node:fs` passes it; `Deno.open` cannot) and is refused, instead of
 * waiting for a writer in one of Deno's threads, where no signal reaches.
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

// sshd's `StrictModes`: what another user could write is not trusted to decide what runs. For a
// plugin dir or script the loader still loads it (as ty does) but warns, and `plugins validate`
// reports it; the daemon refuses a socket dir another user could change.

/**
 * Why `info` (a plugin dir or script) is not safe, and the fix: writable by others, or owned by
 * another user than the current one or root (checked only with `--allow-sys`); else null.
 */
export function unsafeMode(
  info: { mode: number | null; uid: number | null },
  path: string,
): { reason: string; hint: string } | null {
  const mode = info.mode ?? 0;
  if ((mode & 0o022) !== 0) {
    return {
      reason: `is writable by group or others (mode ${modeText(mode)})`,
      hint: `chmod go-w ${quoted(path)}`,
    };
  }
  const me = currentUid();
  if (me !== null && info.uid !== null && info.uid !== me && info.uid !== 0) {
    return {
      reason: `is owned by user ${info.uid}, not by the current user (${me}) or root`,
      hint: `chown ${me} ${quoted(path)}`,
    };
  }
  return null;
}

/**
 * Why someone other than the user (or root) could replace an entry of `dir`, or null: each dir
 * on the way, written and resolved, must be theirs and, if others may write it, sticky (as `/tmp`);
 * each link on the way theirs too. Requires `--allow-read`.
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
      return `"${path}" is writable by group or others and not sticky (mode ${
        modeText(info.mode)
      })`;
    }
  }
  return null;
}

/**
 * The first link on the way to what `path` names owned by another user than the current one or
 * root, who could point it elsewhere at any time; null when none, or when the path cannot be
 * followed (reading it fails anyway). Requires `--allow-read`.
 */
export function foreignLink(path: string): { link: string; uid: number } | null {
  const me = currentUid();
  if (me === null) return null;
  let at = path.startsWith("/") ? "/" : Deno.cwd();
  const rest = path.split("/").reverse();
  try {
    // At most 40 links, as Linux follows (ELOOP past that).
    for (let links = 0; rest.length > 0;) {
      const name = rest.pop()!;
      if (name === "" || name === ".") continue;
      if (name === "..") {
        at = dirname(at);
        continue;
      }
      const next = at === "/" ? `/${name}` : `${at}/${name}`;
      const info = Deno.lstatSync(next);
      if (!info.isSymlink) {
        at = next;
        continue;
      }
      if (info.uid !== null && info.uid !== me && info.uid !== 0) {
        return { link: next, uid: info.uid };
      }
      if (++links > 40) return null;
      const target = Deno.readLinkSync(next);
      // `at` is a real path (every link before was followed), so ".." in the target is its parent.
      if (target.startsWith("/")) at = "/";
      rest.push(...target.split("/").reverse());
    }
  } catch {
    // A path that cannot be followed: reading it fails anyway.
  }
  return null;
}

function chain(dir: string): string[] {
  const paths = [dir];
  for (let up = dirname(dir); up !== paths.at(-1); up = dirname(up)) paths.push(up);
  return paths;
}

let uid: number | null | undefined;

/**
 * The user's id, or null when it cannot be known (no `--allow-sys`). Asked for every plugin dir
 * and script a load checks: the op is looked up once.
 */
export function currentUid(): number | null {
  if (uid !== undefined) return uid;
  try {
    return uid = Deno.uid();
  } catch {
    return null;
  }
}

/**
 * What keeps `info` from being the user's alone with no permission beyond `mode` (0600 for a
 * file, 0700 for a dir): "owner" when someone else owns it (or the user id is not known),
 * "mode" when it allows more; null when neither.
 */
export function notPrivate(info: Deno.FileInfo, mode: number): "owner" | "mode" | null {
  const me = currentUid();
  if (me === null || info.uid !== me) return "owner";
  if (info.mode !== null && (info.mode & 0o777 & ~mode) !== 0) return "mode";
  return null;
}

/** A file mode as messages and `chmod` write it: `0644`, `1777`. */
export function modeText(mode: number): string {
  return (mode & 0o7777).toString(8).padStart(4, "0");
}

/** What {@linkcode checkPrivateDir} found: usable, or why not (`missing`: it does not exist yet). */
export type DirState = { ok: true } | { ok: false; missing: boolean; reason: string };

/**
 * Whether `dir` (named in messages as `what`, e.g. "the cache dir") is a directory of the user's
 * own that nobody else can write: whoever can write it decides what tyhooks reads from it.
 */
export function checkPrivateDir(dir: string, what: string): DirState {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(dir);
  } catch (error) {
    const missing = error instanceof Deno.errors.NotFound;
    const why = missing ? "does not exist yet" : `cannot be read: ${(error as Error).message}`;
    return { ok: false, missing, reason: `${what} ${quoted(dir)} ${why}` };
  }
  const untrusted = (why: string) => ({
    ok: false as const,
    missing: false,
    reason: `${what} ${quoted(dir)} ${why}`,
  });
  if (info.isSymlink) return untrusted("is a symbolic link, not followed");
  if (!info.isDirectory) return untrusted("is not a directory");
  const me = currentUid();
  if (me === null) return untrusted("cannot be checked (the user id is not known)");
  if (info.uid !== me) return untrusted(`is owned by user ${info.uid}, not ${me}`);
  if (info.mode !== null && (info.mode & 0o022) !== 0) {
    return untrusted(`is writable by group or others (mode ${modeText(info.mode)})`);
  }
  return { ok: true };
}

/**
 * Why `path` is not a regular file owned by the user, mode 0600 or narrower, of at most
 * `maxBytes` (`what` names it: "the cache file"); null when it is. Checked with lstat, so a FIFO, a device or a
 * symlink planted there is never opened.
 */
export function checkPrivateFile(path: string, maxBytes: number, what: string): string | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch {
    return `there is no ${what.replace(/^the /, "")} ${quoted(path)}`;
  }
  if (!info.isFile) return `${what} ${quoted(path)} is not a regular file`;
  const unsafe = notPrivate(info, 0o600);
  if (unsafe === "owner") return `${what} ${quoted(path)} is not owned by the user`;
  if (unsafe === "mode") {
    return `${what} ${quoted(path)} has mode ${modeText(info.mode!)}, not 0600`;
  }
  if (info.size > maxBytes) return `${what} ${quoted(path)} is too large`;
  return null;
}

/**
 * `path` opened for appending as a log only the user can read: its dir made (0700) when missing,
 * the file created exclusively (0600) when missing, so nothing planted at the path is opened, an
 * existing one checked with lstat, never followed. A dir or file of the user's that others can
 * get at is narrowed with `repair`, else refused. `what` names the file ("the decision log").
 *
 * @returns The open file, or why it was not opened.
 */
export function openPrivateLog(
  path: string,
  what: string,
  options: { repair?: boolean } = {},
): Deno.FsFile | string {
  const dir = dirname(path);
  // Once the dir is the user's own and 0700, nobody else can swap the file after these checks.
  try {
    Deno.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (options.repair) narrow(dir, 0o700);
  } catch (error) {
    return `cannot make ${quoted(dir)} private: ${(error as Error).message}`;
  }
  const dirState = checkPrivateDir(dir, `${what}'s dir`);
  if (!dirState.ok) return dirState.reason;
  const named = `${what} ${quoted(path)}`;
  for (let attempt = 0; attempt < 2; attempt++) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch {
      try {
        // O_CREAT|O_EXCL: fails on anything already there, a symlink included.
        return Deno.openSync(path, { append: true, createNew: true, mode: 0o600 });
      } catch (error) {
        if (error instanceof Deno.errors.AlreadyExists) continue;
        return `cannot create ${quoted(path)}: ${(error as Error).message}`;
      }
    }
    const problem = logFileProblem(info, named);
    if (problem !== null) {
      if (!problem.mode || !options.repair) return problem.reason;
      try {
        Deno.chmodSync(path, 0o600);
      } catch (error) {
        return `cannot make ${quoted(path)} private: ${(error as Error).message}`;
      }
    }
    try {
      return Deno.openSync(path, { append: true });
    } catch (error) {
      return `cannot write ${quoted(path)}: ${(error as Error).message}`;
    }
  }
  return `${named} keeps changing`;
}

/**
 * Why the file `info` (lstat) at a log's path is not one {@linkcode openPrivateLog} appends to, or
 * null; `mode` when only its mode is wider than 0600 (which `repair` narrows).
 */
export function logFileProblem(
  info: Deno.FileInfo,
  named: string,
): { reason: string; mode: boolean } | null {
  if (info.isSymlink) return { reason: `${named} is a symbolic link, not followed`, mode: false };
  if (!info.isFile) return { reason: `${named} is not a regular file`, mode: false };
  const unsafe = notPrivate(info, 0o600);
  if (unsafe === "owner") return { reason: `${named} is not owned by the user`, mode: false };
  if (unsafe === "mode") {
    return { reason: `${named} has mode ${modeText(info.mode!)}, not 0600`, mode: true };
  }
  return null;
}

// `dir` narrowed to `mode` when it is the user's own (lstat: never through a symlink) and allows
// more.
function narrow(dir: string, mode: number): void {
  const info = Deno.lstatSync(dir);
  if (info.isDirectory && notPrivate(info, mode) === "mode") Deno.chmodSync(dir, mode);
}

/**
 * Moves the log at `path` to `<path>.1` (replacing it), if it is still the file `ino`: one that
 * another writer has just moved is left alone, so two writers over the bound never push a fresh
 * log over the old one. Writers still holding the old file finish in `.1`.
 */
export function rotateLog(path: string, ino: number | null): void {
  try {
    if (ino !== null && Deno.lstatSync(path).ino !== ino) return;
    Deno.renameSync(path, `${path}.1`);
  } catch {
    // Another writer moved it first.
  }
}

/**
 * Replaces `path` with `text` at once: written to a randomly named temp file beside it, created
 * exclusively (never through something planted at that name), then renamed over it, so a reader
 * sees the old file or the new one.
 */
export async function writeAtomic(
  path: string,
  text: string,
  options: { mode: number },
): Promise<void> {
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  try {
    await Deno.writeTextFile(temp, text, { createNew: true, mode: options.mode });
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

/** Whether `path` is a regular file (through symlinks); false when it cannot be looked at. */
export function isFile(path: string | URL): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
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

/** Writes all of `bytes` to `writer` (a file, stdout, a connection), in as many writes as it takes. */
export async function writeAll(
  writer: { write(bytes: Uint8Array): Promise<number> },
  bytes: Uint8Array,
): Promise<void> {
  for (let at = 0; at < bytes.length;) at += await writer.write(bytes.subarray(at));
}
