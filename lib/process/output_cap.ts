/**
 * Reading a child's output streams with bounded memory: whole, up to a cap, counting and dropping
 * the rest (`capture`), or line by line (`LineReader`: persistent hooks' answers, services' output
 * relay). A read can be abandoned at any time (a pipe held open by an escaped descendant must not
 * hold the call).
 *
 * @module
 */

/** What was read from one stream. */
export interface Captured {
  /** The first `cap` bytes. */
  bytes: Uint8Array;
  /** Every byte seen, kept or dropped. */
  total: number;
  /** True when bytes were dropped. */
  truncated: boolean;
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
 * @param onChunk Called with every chunk as it is read (valid only during the call, or until the
 *   promise it returns settles, which holds the next read back: the script then waits on its
 *   pipe, never tyhooks' event loop). Once it throws, or the capture is abandoned while it waits,
 *   it is called no more; the stream is still read to the end.
 */
export function capture(
  stream: ReadableStream<Uint8Array>,
  cap: number,
  onChunk?: (chunk: Uint8Array) => void | Promise<void>,
): Capture {
  const reader = openReader(stream);
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let total = 0;
  const abandoned = Promise.withResolvers<void>();
  let live = onChunk;
  // Before the buffer is reused: live output (plugins run, git's progress) sees every byte.
  const pass = async (value: Uint8Array) => {
    try {
      const pending = live?.(value);
      if (pending !== undefined) await Promise.race([pending, abandoned.promise]);
    } catch {
      live = undefined; // Its reader went away (a closed pipe): the rest is only captured.
    }
  };
  const done = (async () => {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        total += value.length;
        if (live !== undefined) await pass(value);
        if (kept < cap) {
          // A copy: the reader reuses its buffer for the next read.
          const part = value.slice(0, Math.min(value.length, cap - kept));
          chunks.push(part);
          kept += part.length;
        }
      }
    } catch {
      // Cancelled (abandoned) or the pipe broke: keep what was read.
    }
    return { bytes: concat(chunks, kept), total, truncated: total > kept };
  })();
  return {
    done,
    abandon() {
      live = undefined;
      abandoned.resolve();
      reader.cancel().catch(() => {});
    },
  };
}

/** The first read's buffer: most hooks print a line or two. */
const FIRST_READ_BYTES = 4 * 1024;
/** Reads grow to this while they keep filling their buffer. */
const MAX_READ_BYTES = 64 * 1024;

/** A reader whose chunks are only valid until the next `read()`. */
export interface ChunkReader {
  read(): Promise<ReadableStreamReadResult<Uint8Array>>;
  cancel(): Promise<void>;
}

/**
 * Reads a byte stream (a child's pipe) into one reused buffer that starts small and grows while
 * reads fill it. The default reader of a Deno pipe allocates a fresh 64 KiB buffer for every
 * read, several per run, outside the JS heap; under a daemon's load that garbage alone doubled
 * the process's memory. Streams that are not byte streams are read as they come.
 */
export function openReader(stream: ReadableStream<Uint8Array>): ChunkReader {
  let byob: ReadableStreamBYOBReader;
  try {
    byob = stream.getReader({ mode: "byob" });
  } catch {
    return stream.getReader();
  }
  let buffer = new Uint8Array(FIRST_READ_BYTES);
  return {
    async read() {
      const result = await byob.read(buffer);
      if (result.value !== undefined) {
        const full = result.value.length === result.value.buffer.byteLength;
        // The read took the buffer over (transferred it); its memory is reused from here on.
        buffer = full && result.value.length < MAX_READ_BYTES
          ? new Uint8Array(result.value.length * 2)
          : new Uint8Array(result.value.buffer);
      }
      return result as ReadableStreamReadResult<Uint8Array>;
    },
    cancel: () => byob.cancel(),
  };
}

/** Reads newline-terminated lines from a pipe, one at a time, holding at most one line's worth. */
export class LineReader {
  #reader: ChunkReader;
  #pending: Uint8Array = new Uint8Array(0);
  constructor(stream: ReadableStream<Uint8Array>) {
    this.#reader = openReader(stream);
  }
  /**
   * The next line, without its newline (longer than `cap` when it came whole in one read); else
   * `overflow` when more than `cap` bytes came without a newline (they stay buffered for
   * {@linkcode LineReader.take}), or `eof` when the pipe ended (what is buffered is an
   * unterminated last line).
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
