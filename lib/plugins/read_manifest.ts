/**
 * Reads and parses one `plugin.yaml`, never throwing: hostile input (a FIFO, a 10 MB file, NUL
 * bytes, an alias bomb, deep nesting) ends as a problem value with a line and column when known.
 *
 * This module imports `yaml` statically, so it is only ever imported dynamically.
 *
 * @module
 */

import { type Document, LineCounter, parseDocument, visit } from "yaml";
import { observe } from "./_observe.ts";

/**
 * Manifests larger than this are refused: real ones are a few hundred bytes.
 *
 * @example
 * ```ts
 * import { MAX_MANIFEST_BYTES } from "./read_manifest.ts";
 * console.assert(MAX_MANIFEST_BYTES === 1024 * 1024);
 * ```
 */
export const MAX_MANIFEST_BYTES = 1024 * 1024;
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
}

/** Why a manifest could not be parsed. */
export interface ManifestFailure {
  ok: false;
  message: string;
  /** Where, for a YAML syntax error; null otherwise. */
  at: { line: number; column: number } | null;
}

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * Reads `path` and parses it as YAML.
 *
 * Requires `--allow-read`.
 *
 * @param path The `plugin.yaml` file.
 * @returns The parsed manifest, or why it cannot be used.
 * @example
 * ```ts
 * import { readManifest } from "./read_manifest.ts";
 * const read = await readManifest("/nonexistent/plugin.yaml");
 * console.assert(!read.ok);
 * ```
 */
export async function readManifest(path: string): Promise<ParsedManifest | ManifestFailure> {
  let bytes: Uint8Array;
  observe(path);
  try {
    const info = await Deno.stat(path);
    // Reading a FIFO or a device would block or never end.
    if (!info.isFile) return failure("plugin.yaml is not a regular file");
    if (info.size > MAX_MANIFEST_BYTES) {
      return failure(`plugin.yaml is larger than ${MAX_MANIFEST_BYTES} bytes`);
    }
    bytes = await Deno.readFile(path);
  } catch (error) {
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
 * @param text The YAML source.
 * @returns The parsed manifest, or the first YAML error with its line and column.
 * @example
 * ```ts
 * import { parseManifest } from "./read_manifest.ts";
 * const read = parseManifest("name: x\nversion: 1.10\n");
 * console.assert(read.ok && (read.lenient as { version: string }).version === "1.10");
 * ```
 */
export function parseManifest(text: string): ParsedManifest | ManifestFailure {
  const lineCounter = new LineCounter();
  try {
    const doc = parseDocument(text, { lineCounter, prettyErrors: false });
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
    return { ok: true, doc, lineCounter, typed, lenient };
  } catch (error) {
    // toJS throws on an alias bomb; a deeply nested document can exhaust the stack.
    const reason = error instanceof ReferenceError
      ? "too many aliases (a YAML bomb?)"
      : (error as Error).message;
    return failure(`cannot parse plugin.yaml: ${reason}`);
  }
}

function failure(message: string, line?: number, column?: number): ManifestFailure {
  const at = line === undefined || column === undefined ? null : { line, column };
  return { ok: false, message, at };
}
