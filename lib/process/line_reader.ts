/**
 * Reading a child's pipe line by line, holding at most one line's worth: persistent hooks'
 * answers and services' output relay. Whole output under a cap is `capture` in run_script.ts.
 *
 * @module
 */

import { type ChunkReader, openReader } from "./run_script.ts";
import { concat } from "../fs.ts";

/** Reads newline-terminated lines from a pipe, one at a time, holding at most one line's worth. */
export class LineReader {
  #reader: ChunkReader;
  #pending: Uint8Array = new Uint8Array(0);
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = openReader(stream);
  }
  /**
   * The next line, without its newline (past `cap` if it came whole in one read); else `overflow`
   * past `cap` bytes without one (kept for {@linkcode LineReader.take}), or `eof`.
   */
  async next(cap: number): Promise<{ line: Uint8Array } | { end: "eof" | "overflow" }> {
    while (true) {
      const newline = this.#pending.indexOf(10);
      if (newline >= 0) {
        const line = this.#pending.subarray(0, newline);
        this.#pending = this.#pending.subarray(newline + 1);
        return { line };
      }
      if (this.#pending.length > cap) return { end: "overflow" };
      let chunk: ReadableStreamReadResult<Uint8Array>;
      try {
        chunk = await this.#reader.read();
      } catch {
        return { end: "eof" };
      }
      if (chunk.done) return { end: "eof" };
      // A copy: the reader reuses its buffer.
      this.#pending = concat(
        [this.#pending, chunk.value],
        this.#pending.length + chunk.value.length,
      );
    }
  }
  /** The bytes read and not yet returned. */
  get buffered(): Uint8Array {
    return this.#pending;
  }
  /** Removes the first `n` buffered bytes and returns them. */
  take(n: number): Uint8Array {
    const head = this.#pending.subarray(0, n);
    this.#pending = this.#pending.subarray(n);
    return head;
  }
  cancel(): void {
    this.#reader.cancel().catch(() => {});
  }
}
