/**
 * The one way tyhooks reads a file someone else may have written (a manifest, a task, a hosts
 * file, a token, a cache file): it must be a regular file, checked before it is opened, so a
 * FIFO, socket or device is an error naming it instead of a hang or an endless read; the read
 * is capped, so `--task /dev/urandom` or a 10 GB manifest ends in a clear error instead of
 * eating memory; and it takes an abort signal, so SIGINT/SIGTERM ends a read from a stdin that
 * never closes. Opening runs off the main thread (`Deno.open` is async), so even an open that
 * blocks never keeps the signal handlers from running.
 *
 * @module
 */

import { concat } from "./_util.ts";

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
    const file = await Deno.open(path, { read: true });
    try {
      options.signal?.throwIfAborted();
      // What was opened may not be what was checked: check the open file itself.
      const { size } = checkRegular(file.statSync(), maxBytes);
      return readRegular(file, maxBytes, size);
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

function checkRegular(info: Deno.FileInfo, maxBytes: number): Deno.FileInfo {
  if (!info.isFile) {
    throw new BoundedReadError(`not a regular file (${fileKind(info)})`, "not-regular");
  }
  if (info.size > maxBytes) throw tooLarge(maxBytes);
  return info;
}

// A regular file is read synchronously: its reads never wait, and a stream per file (a few
// hundred microseconds each) was most of the cost of loading 1,000 manifests.
function readRegular(file: Deno.FsFile, maxBytes: number, size: number): Uint8Array {
  const chunks: Uint8Array[] = [];
  let total = 0;
  // Sized by the stat (a 64 KiB buffer per manifest was most of a cold load's garbage); a file
  // that grew since is read on in more chunks.
  const buffer = new Uint8Array(Math.min(maxBytes + 1, 64 * 1024, Math.max(1024, size + 1)));
  while (true) {
    const n = file.readSync(buffer);
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
export function fileKind(info: Deno.FileInfo): string {
  if (info.isDirectory) return "a directory";
  if (info.isFifo) return "a FIFO";
  if (info.isSocket) return "a socket";
  if (info.isCharDevice) return "a character device";
  if (info.isBlockDevice) return "a block device";
  if (info.isSymlink) return "a symlink";
  return "not a file";
}
