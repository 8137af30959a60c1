/**
 * Relaying a service's output line by line, each prefixed with where it comes from. A line past
 * the limit goes in pieces, so a service writing a gigabyte without a newline costs one buffer.
 *
 * @module
 */

import { stderrWriter } from "../log.ts";
import { escapeControl } from "../text.ts";
import { LineReader } from "../process/line_reader.ts";

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

const decoder = new TextDecoder();

/** Calls `emit` once per line of `stream` (CR dropped, a long one in pieces, the last one too). */
export function relayLines(
  stream: ReadableStream<Uint8Array>,
  emit: (line: string) => void,
  options: { maxLineBytes?: number } = {},
): Relay {
  const max = Math.max(4, options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES);
  const lines = new LineReader(stream);
  const send = (bytes: Uint8Array) => {
    const text = decoder.decode(bytes);
    emit(text.endsWith("\r") ? text.slice(0, -1) : text);
  };
  // Pieces of at most `max` bytes, each cut where no UTF-8 character is split.
  const sendPieces = (bytes: Uint8Array) => {
    while (bytes.length > max) {
      const cut = cutPoint(bytes, max);
      send(bytes.subarray(0, cut));
      bytes = bytes.subarray(cut);
    }
    send(bytes);
  };
  const done = (async () => {
    while (true) {
      const next = await lines.next(max);
      if ("line" in next) sendPieces(next.line);
      else if (next.end === "overflow") send(lines.take(cutPoint(lines.buffered, max)));
      else break;
    }
    if (lines.buffered.length > 0) sendPieces(lines.buffered);
  })();
  return { done, abandon: () => lines.cancel() };
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
 * A sink writing to stderr through {@linkcode stderrWriter}, so a stalled reader never holds the
 * service back: `[plugin/service] line` escaped as in any text log, or in `json` one log object.
 */
export function stderrSink(format: "text" | "json" = "text"): LineSink {
  return (line, source) => {
    stderrWriter.write(
      format === "json"
        ? JSON.stringify({ time: new Date().toISOString(), level: "info", msg: line, ...source }) +
          "\n"
        : `[${escapeControl(`${source.plugin}/${source.service}`)}] ${escapeControl(line)}\n`,
    );
  };
}

/** The default sink: `[plugin/service] line` on stderr. */
export const prefixedStderr: LineSink = stderrSink("text");
