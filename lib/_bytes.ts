/**
 * Joining the chunks a stream delivered into one buffer.
 *
 * @module
 */

/**
 * Concatenates `chunks` (whose lengths add up to `length`).
 *
 * @param chunks The chunks, in order.
 * @param length Their total length.
 * @returns One buffer (the chunk itself when there is only one).
 * @example
 * ```ts
 * import { concat } from "./_bytes.ts";
 * const joined = concat([new Uint8Array([1]), new Uint8Array([2, 3])], 3);
 * console.assert(joined.join() === "1,2,3");
 * ```
 */
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
