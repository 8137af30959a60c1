/**
 * Relaying a service's output line by line, each line prefixed with where it comes from. Memory
 * is bounded whatever the service prints: a line longer than the limit is cut into pieces of at
 * most the limit (at a UTF-8 character boundary), so a service writing a gigabyte without a
 * newline costs one buffer, not a gigabyte.
 *
 * @module
 */

/** Default longest line relayed in one piece. */
export const DEFAULT_MAX_LINE_BYTES = 64 * 1024;

/** Where a relayed line came from. */
export interface LineSource {
  /** The plugin the service belongs to. */
  plugin: string;
  /** The service's name. */
  service: string;
}

/** Receives each relayed line (without its newline). */
export type LineSink = (line: string, source: LineSource) => void;

/** A relay in progress. */
export interface Relay {
  /** Resolves when the stream ended or was abandoned, after the partial last line is flushed. */
  done: Promise<void>;
  /** Stops reading and releases the pipe (a leftover holder must not keep the relay open). */
  abandon(): void;
}

const NEWLINE = 10;
const decoder = new TextDecoder();
const encoder = new TextEncoder();

/**
 * Reads `stream` and calls `emit` once per line; a trailing `\r` is dropped, and a last line
 * without a newline is emitted when the stream ends or is abandoned.
 *
 * @param stream A child's stdout or stderr.
 * @param emit Called with each line.
 * @param options `maxLineBytes`: longer lines are emitted in pieces; default 64 KiB.
 */
export function relayLines(
  stream: ReadableStream<Uint8Array>,
  emit: (line: string) => void,
  options: { maxLineBytes?: number } = {},
): Relay {
  const max = Math.max(4, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  const reader = stream.getReader();
  const pending = new Uint8Array(max);
  let used = 0;

  const flush = (end: number) => {
    const text = decoder.decode(pending.subarray(0, end));
    emit(text.endsWith("\r") ? text.slice(0, -1) : text);
    pending.copyWithin(0, end, used);
    used -= end;
  };
  const append = (piece: Uint8Array) => {
    while (used + piece.length > max) {
      const room = max - used;
      pending.set(piece.subarray(0, room), used);
      used = max;
      piece = piece.subarray(room);
      flush(cutPoint(pending, used));
    }
    pending.set(piece, used);
    used += piece.length;
  };

  const done = (async () => {
    try {
      while (true) {
        const { done, value } = await reader.read();
        if (done) break;
        let start = 0;
        for (let nl = value.indexOf(NEWLINE); nl !== -1; nl = value.indexOf(NEWLINE, start)) {
          append(value.subarray(start, nl));
          flush(used);
          start = nl + 1;
        }
        append(value.subarray(start));
      }
    } catch {
      // Abandoned, or the pipe broke: flush what was read.
    }
    if (used > 0) flush(used);
  })();
  return {
    done,
    abandon() {
      reader.cancel().catch(() => {});
    },
  };
}

// Where to cut a full buffer so no UTF-8 character is split: before the last character when it
// is incomplete, else at the end.
function cutPoint(bytes: Uint8Array, length: number): number {
  for (let i = length - 1; i >= Math.max(0, length - 4); i--) {
    const byte = bytes[i];
    if ((byte & 0xc0) === 0x80) continue; // A continuation byte: keep looking for the lead.
    const size = byte >= 0xf0 ? 4 : byte >= 0xe0 ? 3 : byte >= 0xc0 ? 2 : 1;
    return i > 0 && i + size > length ? i : length;
  }
  return length;
}

/**
 * A sink writing to stderr: `[plugin/service] line` as text, or in `json` one object a line
 * (`{"time","level":"info","msg":line,"plugin","service"}`) so a JSON log stays parseable.
 * A closed stderr is ignored.
 *
 * @param format `text` (default) or `json`.
 */
export function stderrSink(format: "text" | "json" = "text"): LineSink {
  return (line, source) => {
    const text = format === "json"
      ? JSON.stringify({ time: new Date().toISOString(), level: "info", msg: line, ...source })
      : `[${source.plugin}/${source.service}] ${line}`;
    const bytes = encoder.encode(text + "\n");
    try {
      let written = 0;
      while (written < bytes.length) written += Deno.stderr.writeSync(bytes.subarray(written));
    } catch {
      // A closed stderr (detached run, broken pipe) must never take the supervisor down.
    }
  };
}

/** The default sink: `[plugin/service] line` on stderr. */
export const prefixedStderr: LineSink = stderrSink("text");
