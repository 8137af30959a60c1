/**
 * Reading an input file (a task, a hosts file, a token) with a size cap, so that `--task -`
 * fed from /dev/zero, or `--task /dev/urandom`, ends in a clear error instead of eating memory,
 * and with an abort signal, so that SIGINT/SIGTERM ends a read from a stdin that never closes.
 *
 * @module
 */

import { concat } from "./_bytes.ts";

/** The default cap: 1 MiB, like the daemon's request bodies. */
export const MAX_INPUT_BYTES = 1024 * 1024;

/** Why a bounded read failed. */
export class InputError extends Error {
  override name = "InputError";
}

/** Options of {@linkcode readBounded}. */
export interface ReadBoundedOptions {
  /** Bytes allowed; default {@linkcode MAX_INPUT_BYTES}. */
  maxBytes?: number;
  /** Stops the read (it then rejects with the signal's reason). */
  signal?: AbortSignal;
}

/**
 * Reads `path` (`-` = stdin) as UTF-8 text, at most `maxBytes`.
 *
 * Requires `--allow-read` for a path.
 *
 * @param path The file, or `-` for stdin.
 * @param options Cap and abort signal.
 * @returns The text.
 * @throws {InputError} When the input is larger than the cap.
 * @throws {Deno.errors.NotFound} And the other file-system errors, unchanged.
 * @example
 * ```ts
 * import { readBounded } from "./read_bounded.ts";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "hello");
 * console.assert((await readBounded(path, { maxBytes: 10 })) === "hello");
 * ```
 */
export async function readBounded(path: string, options: ReadBoundedOptions = {}): Promise<string> {
  const maxBytes = options.maxBytes ?? MAX_INPUT_BYTES;
  const file = path === "-" ? null : await Deno.open(path, { read: true });
  const reader = (file?.readable ?? Deno.stdin.readable).getReader();
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
      if (total > maxBytes) throw new InputError(`larger than ${maxBytes} bytes`);
      chunks.push(value);
    }
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
    await reader.cancel().catch(() => {});
  }
  return new TextDecoder().decode(concat(chunks, total));
}
