/**
 * Reads and parses one `plugin.yaml`, never throwing: hostile input (a FIFO, a 10 MB file, NUL
 * bytes, an alias bomb, deep nesting) ends as a problem value with a line and column when known.
 *
 * This module imports `yaml` statically, so it is only ever imported dynamically.
 *
 * @module
 */

import { observe } from "./_observe.ts";
import { BoundedReadError, INPUT_CAPS, readBoundedBytes } from "../read_bounded.ts";
import {
  type Document,
  isAlias,
  isMap,
  isScalar,
  isSeq,
  LineCounter,
  parseAllDocuments,
  parseDocument,
  visit,
} from "yaml";

/**
 * Manifests larger than this are refused: real ones are a few hundred bytes.
 */
export const MAX_MANIFEST_BYTES = INPUT_CAPS.manifest;
/**
 * Manifests nested deeper than this are refused before parsing: real ones nest four levels,
 * and parsing a deeply nested document costs time and memory out of proportion to its size.
 */
export const MAX_MANIFEST_DEPTH = 64;
// yaml's own default, written down: aliases may expand data at most this much.
const MAX_ALIAS_COUNT = 100;

/** A parsed manifest. */
export interface ParsedManifest {
  ok: true;
  /** The YAML document, for finding where a key or value is. */
  doc: Document.Parsed;
  lineCounter: LineCounter;
  /** The data with YAML 1.2 core types (`1.10` is a number): what the strict lint checks. */
  typed: unknown;
  /**
   * The data with every non-null scalar as the text written (`1.10` stays "1.10"), the way ty
   * (Go, yaml.v3) reads scalars into string fields: what the forgiving loader uses.
   */
  lenient: unknown;
  /**
   * Documents after the first (`---`), which are not read, as ty's yaml.v3 reads only the first;
   * null when there are none. `plugins validate` reports them.
   */
  extraDocuments: { count: number; line: number; column: number } | null;
}

/** Why a manifest could not be parsed. */
export interface ManifestFailure {
  ok: false;
  message: string;
  /** Where, for a YAML syntax error; null otherwise. */
  at: { line: number; column: number } | null;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/** Options of {@linkcode readManifest}. */
export interface ReadManifestOptions {
  /** Stops the read (the manifest is then reported unreadable). */
  signal?: AbortSignal;
}

/**
 * Reads `path` (a regular file, at most {@linkcode MAX_MANIFEST_BYTES}) and parses it as YAML.
 *
 * Requires `--allow-read`.
 *
 * @param path The `plugin.yaml` file.
 * @param options The abort signal.
 * @returns The parsed manifest, or why it cannot be used.
 */
export async function readManifest(
  path: string,
  options: ReadManifestOptions = {},
): Promise<ParsedManifest | ManifestFailure> {
  let bytes: Uint8Array;
  observe(path);
  try {
    bytes = await readBoundedBytes(path, {
      maxBytes: MAX_MANIFEST_BYTES,
      signal: options.signal,
    });
  } catch (error) {
    if (error instanceof BoundedReadError && error.reason === "not-regular") {
      return failure("plugin.yaml is not a regular file");
    }
    if (error instanceof BoundedReadError) {
      return failure(`plugin.yaml is larger than ${MAX_MANIFEST_BYTES} bytes`);
    }
    return failure(`cannot read plugin.yaml: ${(error as Error).message}`);
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    return failure("plugin.yaml is not valid UTF-8");
  }
  return parseManifest(text);
}

/**
 * Parses manifest text.
 *
 * @returns The parsed manifest, or the first YAML error with its line and column.
 */
export function parseManifest(text: string): ParsedManifest | ManifestFailure {
  if (nestingDepth(text) > MAX_MANIFEST_DEPTH) {
    return failure(`plugin.yaml is nested deeper than ${MAX_MANIFEST_DEPTH} levels`);
  }
  const lineCounter = new LineCounter();
  try {
    // As ty's yaml.v3: merge keys (`<<: *base`) work, and only the first document is read.
    const options = { lineCounter, prettyErrors: false, merge: true };
    const docs = parseAllDocuments(text, options);
    const all = Array.isArray(docs) && docs.length > 0 ? docs : [parseDocument(text, options)];
    const doc = all[0];
    let extraDocuments: ParsedManifest["extraDocuments"] = null;
    if (all.length > 1) {
      const { line, col } = lineCounter.linePos(all[1].range[0]);
      extraDocuments = { count: all.length - 1, line, column: col };
    }
    const error = doc.errors[0];
    if (error) {
      const { line, col } = lineCounter.linePos(error.pos[0]);
      return failure(`invalid YAML: ${error.message}`, line, col);
    }
    const typed = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    // Visiting nodes does not follow aliases, so this is bounded by the text's size.
    visit(doc, {
      Scalar(_key, node) {
        if (node.value !== null && typeof node.value !== "string" && node.source !== undefined) {
          node.value = node.source;
        }
      },
    });
    const lenient = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    return { ok: true, doc, lineCounter, typed, lenient, extraDocuments };
  } catch (error) {
    // toJS throws on an alias bomb; a deeply nested document can exhaust the stack.
    const reason = error instanceof ReferenceError
      ? "too many aliases (a YAML bomb?)"
      : (error as Error).message;
    return failure(`cannot parse plugin.yaml: ${reason}`);
  }
}

/**
 * How deeply `text` nests, counted without parsing it (a parser is what a deep document makes
 * slow): block indentation levels and sequence dashes, plus open flow brackets outside quotes
 * and comments. It may count a level too many, never too few; real manifests stay far below the
 * bound either way.
 */
export function nestingDepth(text: string): number {
  const indents: number[] = [];
  let flow = 0;
  let deepest = 0;
  for (const raw of text.split("\n")) {
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    let i = 0;
    while (line[i] === " ") i++;
    if (i === line.length || line[i] === "#") continue;
    if (flow === 0) {
      while (indents.length > 0 && indents[indents.length - 1] >= i) indents.pop();
      indents.push(i);
    }
    let block = indents.length;
    // "- - - x": each dash opens one more sequence on the same line.
    while (line[i] === "-" && (i + 1 === line.length || line[i + 1] === " ")) {
      block++;
      i += 1;
      while (line[i] === " ") i++;
    }
    let quote = "";
    for (; i < line.length; i++) {
      const c = line[i];
      if (quote !== "") {
        if (c === quote) quote = "";
        else if (c === "\\" && quote === '"') i++;
      } else if (c === '"' || c === "'") quote = c;
      else if (c === "#" && (i === 0 || line[i - 1] === " ")) break;
      else if (c === "[" || c === "{") deepest = Math.max(deepest, block + ++flow);
      else if (c === "]" || c === "}") flow = Math.max(0, flow - 1);
    }
    deepest = Math.max(deepest, block + flow);
  }
  return deepest;
}

function failure(message: string, line?: number, column?: number): ManifestFailure {
  const at = line === undefined || column === undefined ? null : { line, column };
  return { ok: false, message, at };
}

// Maps a path in a manifest's data (`["actions", 0, "command"]`) back to a line and column, so
// every warning can point at the text to fix.

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
