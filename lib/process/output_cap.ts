/**
 * Reads a child's output stream into memory up to a cap, counting and dropping the rest, so
 * memory stays bounded whatever the script prints. The read can be abandoned at any time (a pipe
 * held open by an escaped descendant must not hold the call).
 *
 * @module
 */

import { concat } from "../_bytes.ts";

/** What was read from one stream. */
export interface Captured {
  /** The first `cap` bytes. */
  bytes: Uint8Array;
  /** Every byte seen, kept or dropped. */
  total: number;
  /** True when bytes were dropped. */
  truncated: boolean;
  /** True when the stream reached its end (false when abandoned). */
  ended: boolean;
}

/** A capture in progress. */
export interface Capture {
  /** Resolves when the stream ends or is abandoned. */
  done: Promise<Captured>;
  /** Stops reading and releases the pipe; `done` then resolves with what was read. */
  abandon(): void;
}

/**
 * Starts reading `stream` with at most `cap` bytes kept.
 *
 * @param stream A child's stdout or stderr.
 * @param cap Bytes to keep; the rest is read and dropped.
 * @returns The capture.
 * @example
 * ```ts
 * import { capture } from "./output_cap.ts";
 * const c = capture(new Blob(["hello world"]).stream(), 5);
 * const got = await c.done;
 * console.assert(got.total === 11 && got.truncated && got.bytes.length === 5);
 * ```
 */
export function capture(stream: ReadableStream<Uint8Array>, cap: number): Capture {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let total = 0;
  let ended = false;
  const done = (async () => {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) {
          ended = true;
          break;
        }
        total += value.length;
        if (kept < cap) {
          const part = value.length <= cap - kept ? value : value.subarray(0, cap - kept);
          chunks.push(part);
          kept += part.length;
        }
      }
    } catch {
      // Cancelled (abandoned) or the pipe broke: keep what was read.
    }
    return { bytes: concat(chunks, kept), total, truncated: total > kept, ended };
  })();
  return {
    done,
    abandon() {
      reader.cancel().catch(() => {});
    },
  };
}
