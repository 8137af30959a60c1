/**
 * The plain subset of YAML manifests are written in (block maps and lists, one-line flow lists,
 * plain and quoted scalars without escapes, comments), read without the `yaml` package, which
 * reads anything else, errors and all. tests/plugins/read_manifest_test.ts checks that both read
 * every plain text the same.
 *
 * @module
 */

// Printable characters (YAML 1.2) other than tab, CR, the byte order mark and the three that
// yaml may take for line breaks (NEL, LS, PS).
const NOT_PLAIN_CHAR =
  /[^\n\x20-\x7e\xa0-\u2027\u202a-\ud7ff\ue000-\ufefe\uff00-\ufffd\u{10000}-\u{10ffff}]/u;
const KEY = /[A-Za-z_][\w./-]*(?=:(?: |$))/y;
const NOT_A_STRING_KEY = /^(?:[Nn]ull|NULL|[Tt]rue|TRUE|[Ff]alse|FALSE|__proto__)$/;
// Never the first character of a plain scalar here: YAML indicators.
const INDICATOR = /[-?:,[\]{}#&*!|>'"%@`]/;
// Never inside one: brackets (`nestingDepth` in read_manifest.ts counts them), `: ` and a final
// `:` (a key).
const NOT_IN_PLAIN = /[[\]{}]|: |:$/;
const NOT_IN_FLOW_PLAIN = /[[\]{}#:'"]/;
// What may follow a value on its line.
const COMMENT = / +(?:#|$)/y;
const MAX_DEPTH = 16;
// yaml refuses an implicit key of 1,024 characters or more.
const MAX_KEY = 1000;

const NOT_PLAIN = {};

/** Options of {@linkcode readPlain}. */
export interface ReadPlainOptions {
  /** Core types (`1.10` -> 1.1), as `typed`; default: non-null scalars as written (`lenient`). */
  typed?: boolean;
}

/**
 * Reads `text` when it is written in the plain subset of YAML manifests use, giving exactly what
 * the `yaml` package gives, and whether the typed reading differs; null for anything else.
 */
export function readPlain(
  text: string,
  options: ReadPlainOptions = {},
): { value: Record<string, unknown>; typesDiffer: boolean } | null {
  if (NOT_PLAIN_CHAR.test(text)) return null;
  const reader = new PlainReader(text.split("\n"), options.typed ?? false);
  try {
    reader.nextLine();
    if (reader.line === undefined || reader.indent() !== 0) return null;
    const value = reader.map(0, 0, 0);
    if (reader.line !== undefined) return null;
    return { value, typesDiffer: reader.typesDiffer };
  } catch (error) {
    if (error === NOT_PLAIN) return null;
    throw error;
  }
}

class PlainReader {
  #lines: string[];
  #typed: boolean;
  #at = -1;
  /** The current line (blank lines and comments skipped), undefined at the end. */
  line: string | undefined;
  typesDiffer = false;

  constructor(lines: string[], typed: boolean) {
    this.#lines = lines;
    this.#typed = typed;
  }

  nextLine(): void {
    for (this.#at++; this.#at < this.#lines.length; this.#at++) {
      const line = this.#lines[this.#at];
      const start = this.#skipSpaces(line, 0);
      if (start < line.length && line[start] !== "#") {
        this.line = line;
        return;
      }
    }
    this.line = undefined;
  }

  indent(): number {
    return this.#skipSpaces(this.line!, 0);
  }

  // A block map whose keys start at column `indent`, its first key at `column` of this line
  // (after a sequence dash, that is `indent` too).
  map(indent: number, column: number, depth: number): Record<string, unknown> {
    if (depth > MAX_DEPTH) throw NOT_PLAIN;
    const out: Record<string, unknown> = {};
    for (let start = column;;) {
      const line = this.line!;
      KEY.lastIndex = start;
      const key = KEY.exec(line)?.[0];
      if (
        key === undefined || key.length > MAX_KEY || NOT_A_STRING_KEY.test(key) ||
        Object.hasOwn(out, key)
      ) throw NOT_PLAIN;
      const at = this.#skipSpaces(line, start + key.length + 1);
      if (at < line.length && line[at] !== "#") {
        out[key] = this.inline(line, at);
        this.nextLine();
      } else {
        this.nextLine();
        const below = this.line === undefined ? -1 : this.indent();
        if (below > indent) out[key] = this.block(below, depth + 1);
        else if (below === indent && this.#dashAt(below)) out[key] = this.seq(below, depth + 1);
        else out[key] = null;
      }
      if (this.line === undefined) return out;
      const next = this.indent();
      if (next < indent || (next === indent && this.#dashAt(next))) return out;
      if (next > indent) throw NOT_PLAIN;
      start = next;
    }
  }

  block(indent: number, depth: number): unknown {
    return this.#dashAt(indent) ? this.seq(indent, depth) : this.map(indent, indent, depth);
  }

  seq(indent: number, depth: number): unknown[] {
    if (depth > MAX_DEPTH) throw NOT_PLAIN;
    const out: unknown[] = [];
    while (this.line !== undefined && this.indent() === indent && this.#dashAt(indent)) {
      const line = this.line;
      const at = this.#skipSpaces(line, indent + 2);
      KEY.lastIndex = at;
      if (KEY.test(line)) {
        out.push(this.map(at, at, depth + 1));
      } else {
        if (at >= line.length || line[at] === "#") throw NOT_PLAIN;
        out.push(this.inline(line, at));
        this.nextLine();
      }
    }
    if (this.line !== undefined && this.indent() > indent) throw NOT_PLAIN;
    return out;
  }

  #dashAt(at: number): boolean {
    const line = this.line!;
    return line[at] === "-" && (line[at + 1] === " " || at + 1 === line.length);
  }

  // A value that ends with its line: a quoted or plain scalar, or a flow sequence.
  inline(line: string, at: number): unknown {
    let value: unknown;
    let end: number;
    if (line[at] === "[") {
      const items: unknown[] = [];
      end = this.#skipSpaces(line, at + 1);
      if (line[end] !== "]") {
        for (;;) {
          const [item, after] = this.#flowItem(line, this.#skipSpaces(line, end));
          items.push(item);
          end = this.#skipSpaces(line, after);
          if (line[end] === "]") break;
          if (line[end++] !== ",") throw NOT_PLAIN;
        }
      }
      end++;
      value = items;
    } else if (line[at] === '"' || line[at] === "'") {
      [value, end] = this.#quoted(line, at);
    } else {
      const comment = line.indexOf(" #", at);
      end = comment < 0 ? line.length : comment;
      value = this.#plain(trimWhite(line.slice(at, end)), NOT_IN_PLAIN);
    }
    COMMENT.lastIndex = end;
    if (end < line.length && !COMMENT.test(line)) throw NOT_PLAIN;
    return value;
  }

  #flowItem(line: string, at: number): [unknown, number] {
    if (line[at] === '"' || line[at] === "'") return this.#quoted(line, at);
    let end = at;
    while (end < line.length && line[end] !== "," && line[end] !== "]") end++;
    return [this.#plain(trimWhite(line.slice(at, end)), NOT_IN_FLOW_PLAIN), end];
  }

  // Double quotes without escapes; single quotes with `''` for a quote.
  #quoted(line: string, at: number): [string, number] {
    const quote = line[at];
    let text = "";
    for (let from = at + 1;;) {
      const close = line.indexOf(quote, from);
      if (close < 0) throw NOT_PLAIN;
      text += line.slice(from, close);
      if (quote === '"' || line[close + 1] !== "'") {
        if (quote === '"' && text.includes("\\")) throw NOT_PLAIN;
        return [text, close + 1];
      }
      text += "'";
      from = close + 2;
    }
  }

  #plain(text: string, refused: RegExp): unknown {
    if (text === "" || INDICATOR.test(text[0]) || refused.test(text)) throw NOT_PLAIN;
    const value = coreValue(text);
    if (value === null || typeof value === "string") return value;
    this.typesDiffer = true;
    return this.#typed ? value : text;
  }

  #skipSpaces(line: string, at: number): number {
    while (line[at] === " ") at++;
    return at;
  }
}

/**
 * What a plain scalar means under the YAML 1.2 core schema (spec 10.3.2), converted as the
 * `yaml` package converts it.
 */
function coreValue(text: string): unknown {
  if (!MAYBE_NOT_A_STRING.test(text)) return text;
  if (CORE.null.test(text)) return null;
  if (CORE.bool.test(text)) return text[0] === "t" || text[0] === "T";
  if (CORE.int.test(text)) return parseInt(text, 10);
  if (CORE.octal.test(text)) return parseInt(text.slice(2), 8);
  if (CORE.hex.test(text)) return parseInt(text.slice(2), 16);
  if (CORE.float.test(text)) return parseFloat(text);
  if (CORE.infinity.test(text)) return text[0] === "-" ? -Infinity : Infinity;
  if (CORE.nan.test(text)) return NaN;
  return text;
}

const CORE = {
  null: /^(?:~|[Nn]ull|NULL)$/,
  bool: /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/,
  int: /^[-+]?[0-9]+$/,
  octal: /^0o[0-7]+$/,
  hex: /^0x[0-9a-fA-F]+$/,
  float: /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?$/,
  infinity: /^[-+]?\.(?:inf|Inf|INF)$/,
  nan: /^\.(?:nan|NaN|NAN)$/,
};
// What every scalar above starts with: most plain scalars here (names, paths) are strings at once.
const MAYBE_NOT_A_STRING = /^[-+.0-9~nNtTfF]/;

/**
 * A plain scalar without its trailing YAML white space: spaces and tabs only. `trimEnd()` would
 * also take U+00A0, U+3000 and the like, which YAML keeps, and name another script than yaml does.
 */
function trimWhite(text: string): string {
  let end = text.length;
  while (end > 0 && (text[end - 1] === " " || text[end - 1] === "\t")) end--;
  return text.slice(0, end);
}
