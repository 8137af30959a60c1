/**
 * Maps a path in a manifest's data (`["actions", 0, "command"]`) back to a line and column, so
 * every warning can point at the text to fix.
 *
 * @module
 */

import { type Document, isAlias, isMap, isScalar, isSeq, type LineCounter } from "yaml";

/** A 1-based line and column. */
export interface Position {
  line: number;
  column: number;
}

/** Options of {@linkcode locate}. */
export interface LocateOptions {
  /** Point at the last key itself rather than its value (e.g. an unknown key). Default false. */
  key?: boolean;
}

/**
 * Finds where `path` is written. When the path does not exist (a missing key), the position of
 * the deepest part that does exist is returned, e.g. the action missing its `command`.
 *
 * @param source The parsed document and its line counter.
 * @param path Keys and indexes from the document root.
 * @param options Whether to point at the key.
 * @returns The position (1:1 for an empty document).
 */
export function locate(
  source: { doc: Document.Parsed; lineCounter: LineCounter },
  path: readonly PropertyKey[],
  options: LocateOptions = {},
): Position {
  const { doc } = source;
  let node: unknown = doc.contents;
  let offset = startOf(node) ?? 0;
  for (let i = 0; i < path.length; i++) {
    if (isAlias(node)) node = node.resolve(doc);
    const segment = path[i];
    if (isMap(node)) {
      const pair = node.items.find((p) =>
        isScalar(p.key) && String(p.key.value) === String(segment)
      );
      if (pair === undefined) break;
      if (options.key && i === path.length - 1) {
        offset = startOf(pair.key) ?? offset;
        break;
      }
      node = pair.value;
      offset = startOf(node) ?? startOf(pair.key) ?? offset;
    } else if (isSeq(node) && typeof segment === "number" && segment < node.items.length) {
      node = node.items[segment];
      offset = startOf(node) ?? offset;
    } else {
      break;
    }
  }
  const { line, col } = source.lineCounter.linePos(offset);
  return { line, column: col };
}

function startOf(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range?.[0];
}
