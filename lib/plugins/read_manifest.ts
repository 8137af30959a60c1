/**
 * Reads and parses one `plugin.yaml`, never throwing: hostile input (a FIFO, a 10 MB file, NUL
 * bytes, an alias bomb, deep nesting) ends as a problem value. The plain subset most manifests use
 * is read by plain_yaml.ts; the `yaml` package, imported on first need, reads the rest and gives
 * the positions of a manifest with a problem (lib/README.md, "Startup and the index cache").
 *
 * @module
 */

import type { Document, LineCounter } from "npm:yaml@^2.8.0";
import type { Observe } from "./types.ts";
import { BoundedReadError, INPUT_CAPS, readBoundedBytes } from "../fs.ts";
import { readPlain } from "./plain_yaml.ts";

// Real manifests are a few hundred bytes and nest four levels; parsing a deeply nested document
// costs time and memory out of proportion to its size, so deeper ones are refused before it.
export const MAX_MANIFEST_BYTES = INPUT_CAPS.manifest;
const MAX_MANIFEST_DEPTH = 64;
// yaml's own default, written down: aliases may expand data at most this much.
const MAX_ALIAS_COUNT = 100;

/** A parsed manifest. */
export interface ParsedManifest {
  ok: true;
  text: string;
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
  /** The YAML document, for finding where a key or value is; set by {@linkcode located}. */
  yaml?: Positions;
}

/** A YAML document and its line counter. */
export interface Positions {
  doc: Document.Parsed;
  lineCounter: LineCounter;
}

/** Why a manifest could not be parsed. */
export interface ManifestFailure {
  ok: false;
  message: string;
  /** Where, for a YAML syntax error; null otherwise. */
  at: { line: number; column: number } | null;
}

/**
 * A manifest's text as ty's `yaml.v3` reads it: UTF-16 after a UTF-16 byte order mark, else
 * UTF-8, refusing invalid bytes and characters YAML does not allow, so UTF-16 without a mark and
 * UTF-32 are refused as ty refuses them rather than read as text with NULs in it.
 */
function decodeManifest(bytes: Uint8Array): { ok: true; text: string } | ManifestFailure {
  const encoding = bytes[0] === 0xff && bytes[1] === 0xfe
    ? "utf-16le"
    : bytes[0] === 0xfe && bytes[1] === 0xff
    ? "utf-16be"
    : "utf-8";
  const notRead = (wide: string) =>
    failure(`plugin.yaml is ${wide}, which ty does not read (hint: save it as UTF-8)`);
  let text: string;
  try {
    text = new TextDecoder(encoding, { fatal: true }).decode(bytes);
  } catch {
    const wide = encoding === "utf-8" ? wideEncoding(bytes) : null;
    return wide === null
      ? failure(`plugin.yaml is not valid ${encoding.toUpperCase()}`)
      : notRead(wide);
  }
  const refused = NOT_YAML_CHAR.exec(text);
  if (refused === null) return { ok: true, text };
  const wide = refused[0] === "\0" ? wideEncoding(bytes) : null;
  if (wide !== null) return notRead(wide);
  const before = text.slice(0, refused.index).split("\n");
  const code = refused[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
  const at = { line: before.length, column: before[before.length - 1].length + 1 };
  return failure(
    `plugin.yaml holds the control character U+${code}, which YAML does not allow`,
    at,
  );
}

// What yaml.v3's reader accepts: tab, LF, CR, printable ASCII, NEL, and the rest of Unicode but
// the surrogates (never left after a fatal decode) and U+FFFE, U+FFFF.
const NOT_YAML_CHAR = /[^\t\n\r\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

// The wide encoding that the zero bytes of a YAML text's start give away (YAML 1.2, 5.2): a
// stream starts with an ASCII character or a byte order mark.
function wideEncoding(bytes: Uint8Array): string | null {
  const [a, b, c, d] = bytes;
  if (a === 0 && b === 0 && (c === 0 || (c === 0xfe && d === 0xff))) return "UTF-32BE text";
  if ((b === 0 || (a === 0xff && b === 0xfe)) && c === 0 && d === 0) return "UTF-32LE text";
  if (a === 0 && b !== 0 && c === 0) return "UTF-16BE text without a byte order mark";
  if (a !== 0 && b === 0 && d === 0) return "UTF-16LE text without a byte order mark";
  return null;
}

/** Options of {@linkcode readManifest}. */
export interface ReadManifestOptions {
  /** Stops the read (the manifest is then reported unreadable). */
  signal?: AbortSignal;
  observe?: Observe;
  /** A regular file no other user can write or replace (see `ReadBoundedOptions`). */
  knownRegular?: boolean;
}

/** Reads and parses `path` (a regular file of at most {@linkcode MAX_MANIFEST_BYTES}). */
export async function readManifest(
  path: string,
  options: ReadManifestOptions = {},
): Promise<ParsedManifest | ManifestFailure> {
  const { signal, observe, knownRegular } = options;
  let bytes: Uint8Array;
  observe?.(path);
  try {
    bytes = await readBoundedBytes(path, { maxBytes: MAX_MANIFEST_BYTES, signal, knownRegular });
  } catch (error) {
    if (error instanceof BoundedReadError && error.reason === "not-regular") {
      return failure("plugin.yaml is not a regular file");
    }
    if (error instanceof BoundedReadError) {
      return failure(`plugin.yaml is larger than ${MAX_MANIFEST_BYTES} bytes`);
    }
    return failure(`cannot read plugin.yaml: ${(error as Error).message}`);
  }
  const decoded = decodeManifest(bytes);
  if (!decoded.ok) return decoded;
  const text = decoded.text;
  const plain = readPlain(text);
  if (plain === null) return await parseYaml(text);
  const typed = plain.typesDiffer ? readPlain(text, { typed: true })!.value : plain.value;
  return { ok: true, text, typed, lenient: plain.value, extraDocuments: null };
}

/** The manifest with its YAML document, parsed with positions when it was read without them. */
export async function located(parsed: ParsedManifest): Promise<Positions> {
  if (parsed.yaml === undefined) {
    const full = await parseYaml(parsed.text);
    // readPlain reads only what the yaml package reads the same way, without error.
    if (!full.ok) throw new Error(`Manifest read two ways: ${full.message}`);
    parsed.yaml = full.yaml;
  }
  return parsed.yaml!;
}

let yaml: typeof import("npm:yaml@^2.8.0") | undefined;

/** Parses manifest text with the yaml package, positions included; the first error if any. */
export async function parseYaml(text: string): Promise<ParsedManifest | ManifestFailure> {
  yaml ??= await import("npm:yaml@^2.8.0");
  if (nestingDepth(new yaml.Lexer().lex(text)) > MAX_MANIFEST_DEPTH) {
    return failure(`plugin.yaml is nested deeper than ${MAX_MANIFEST_DEPTH} levels`);
  }
  const lineCounter = new yaml.LineCounter();
  try {
    // As ty's yaml.v3: merge keys (`<<: *base`) work, and only the first document is read.
    const options = { lineCounter, prettyErrors: false, merge: true };
    const docs = yaml.parseAllDocuments(text, options);
    const all = Array.isArray(docs) && docs.length > 0 ? docs : [yaml.parseDocument(text, options)];
    const doc = all[0];
    const extraDocuments = all.length > 1
      ? { count: all.length - 1, ...positionOf(lineCounter, all[1].range[0]) }
      : null;
    const error = doc.errors[0];
    const invalid = error
      ? { at: error.pos[0], message: error.message }
      : surrogateEscape(doc, text);
    if (invalid !== null) {
      return failure(`invalid YAML: ${invalid.message}`, positionOf(lineCounter, invalid.at));
    }
    const typed = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    // Visiting nodes does not follow aliases, so this is bounded by the text's size.
    yaml.visit(doc, {
      Scalar(_key, node) {
        if (node.value !== null && typeof node.value !== "string" && node.source !== undefined) {
          node.value = node.source;
        }
      },
    });
    const lenient = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    const positions = { doc, lineCounter };
    return { ok: true, text, typed, lenient, extraDocuments, yaml: positions };
  } catch (error) {
    // toJS throws on an alias bomb; a deeply nested document can exhaust the stack.
    const reason = error instanceof ReferenceError
      ? "too many aliases (a YAML bomb?)"
      : (error as Error).message;
    return failure(`cannot parse plugin.yaml: ${reason}`);
  }
}

// A `\u` or `\U` escape of a UTF-16 surrogate (D800-DFFF) in a double-quoted scalar: ty's yaml.v3
// refuses the manifest ("found invalid Unicode character escape code"), even for a pair that
// makes one character, where the yaml package decodes it. Only double-quoted scalars have escapes
// (the plain reader takes none of them), so only those are scanned, as written.
const ESCAPE = /\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|[^])/g;

function surrogateEscape(
  doc: Document.Parsed,
  text: string,
): { at: number; message: string } | null {
  let found: { at: number; message: string } | null = null;
  yaml!.visit(doc, {
    Scalar(_key, node) {
      if (node.type !== "QUOTE_DOUBLE" || !node.range) return undefined;
      const start = node.range[0];
      const written = text.slice(start, node.range[1]);
      const escapes = [...written.matchAll(ESCAPE)];
      for (const [i, match] of escapes.entries()) {
        const code = parseInt(match[1] ?? match[2] ?? "", 16);
        if (!(code >= 0xd800 && code <= 0xdfff)) continue;
        // A high half written just before a low half: the character they make, as one escape.
        const next = escapes[i + 1];
        const low = next?.index === match.index + match[0].length ? parseInt(next[1], 16) : NaN;
        const pair = code <= 0xdbff && low >= 0xdc00 && low <= 0xdfff;
        const point = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        const hint = pair
          ? `write the character itself, or "\\U${
            point.toString(16).toUpperCase().padStart(8, "0")
          }"`
          : "a lone surrogate is not a character: remove it";
        found = {
          at: start + match.index,
          message: `"${match[0]}" escapes half of a UTF-16 surrogate pair, which ty's YAML ` +
            `reader (yaml.v3) refuses (hint: ${hint})`,
        };
        return yaml!.visit.BREAK;
      }
      return undefined;
    },
  });
  return found;
}

// How deeply a document nests, counted from the yaml package's lexer tokens without parsing
// them (a parser is what a deep document makes slow; the lexer is linear, with no recursion, and
// reads quotes and comments as the parser does): block indentation levels and sequence dashes,
// plus open flow brackets. It may count a level too many, never too few.
function nestingDepth(tokens: Iterable<string>): number {
  const indents: number[] = [];
  let flow = 0;
  let deepest = 0;
  let block = 0;
  // Where the line stands: its indentation, its leading "- - " run, the rest, or a comment.
  let at: "indent" | "dashes" | "rest" | "comment" = "indent";
  let indent = 0;
  for (const token of tokens) {
    if (token === "\n" || token === "\r\n") {
      [at, indent] = ["indent", 0];
      continue;
    }
    if (at === "comment") continue;
    if (at === "indent") {
      if (token.trim() === "") {
        indent = token.length;
        continue;
      }
      if (token.startsWith("#")) {
        at = "comment";
        continue;
      }
      if (flow === 0) {
        while (indents.length > 0 && indents[indents.length - 1] >= indent) indents.pop();
        indents.push(indent);
      }
      [at, block] = ["dashes", indents.length];
    }
    if (token.trim() === "") continue;
    if (at === "dashes" && token === "-") block++;
    else at = "rest";
    if (token === "[" || token === "{") flow++;
    else if (token === "]" || token === "}") flow = Math.max(0, flow - 1);
    deepest = Math.max(deepest, block + flow);
  }
  return deepest;
}

function failure(message: string, at: ManifestFailure["at"] = null): ManifestFailure {
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
 * Finds where `path` (keys and indexes from the root) is written in a document from
 * {@linkcode located}; for a missing key, where the deepest part that exists is (the action
 * missing its `command`); 1:1 for an empty document.
 */
export function locate(
  source: Positions,
  path: readonly PropertyKey[],
  options: LocateOptions = {},
): Position {
  const { isAlias, isMap, isScalar, isSeq } = yaml!;
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
  return positionOf(source.lineCounter, offset);
}

function positionOf(lineCounter: LineCounter, offset: number): Position {
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

function startOf(node: unknown): number | undefined {
  const range = (node as { range?: [number, number, number] } | null)?.range;
  return range?.[0];
}
