/**
 * The readers every wire format is declared with. A format's reader is its only validator: it
 * builds the value and words what is wrong, so the warm path and the error path cannot disagree,
 * and it is the `Schema` the library exports. Objects may be read as Go's `encoding/json` reads
 * ty's structs, since ty reads the same answers. Each format states `true satisfies Same<Infer<
 * typeof reader>, X>;` (a statement, as `noUnusedLocals` rejects an unused alias), so a field
 * added to its reader or its interface alone fails `deno check`.
 *
 * @module
 */

import { escapeControl, quoted } from "../text.ts";

/** One thing wrong with a value. */
export interface SchemaIssue {
  /** Where, from the top: object keys and array indexes; empty for the value itself. */
  readonly path: readonly PropertyKey[];
  /** What is wrong, in words, e.g. `expected an integer, got "3"`. */
  readonly message: string;
}

/** What {@linkcode Schema.safeParse} returns: the value, or everything wrong with it. */
export type SafeParse<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly SchemaIssue[] } };

/**
 * A schema of the library: reads a decoded JSON (or YAML) value as a `T`. Every format's is its
 * reader; the manifest's is the zod schema that also generates its JSON Schema.
 */
export interface Schema<T> {
  /**
   * Reads `value`: the result has the schema's defaults filled in and, unless the schema is
   * strict, unknown keys dropped.
   *
   * @throws {Error} What is wrong, with its `issues` (a `SchemaError`; zod's for the manifest).
   */
  parse(value: unknown): T;
  /** Reads `value` without throwing: the result says whether it passed. */
  safeParse(value: unknown): SafeParse<T>;
}

/**
 * `true` when a reader's type and its interface are the same type: stricter than assignability
 * both ways (an optional field is not a required one, `readonly` counts, `any` equals only
 * `any`). Otherwise an object naming the fields only one side has, for `deno check`'s error (both
 * `never`: a field they share differs in type or optionality).
 */
export type Same<Reader, Interface> = (<T>() => T extends Reader ? 1 : 2) extends
  (<T>() => T extends Interface ? 1 : 2) ? true : {
  only_in_reader: Exclude<keyof Reader, keyof Interface>;
  only_in_interface: Exclude<keyof Interface, keyof Reader>;
};

/**
 * Parses `text` as JSON: the value, or `malformed JSON: <why>`. V8's reason quotes the text (a
 * hook's output, say) as it came: its control characters are escaped, so the reason is one line
 * that writes nothing to a terminal.
 */
export function parseJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: `malformed JSON: ${escapeControl((error as Error).message)}` };
  }
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * `bytes` as one JSON value: strict UTF-8 (refused, never patched: a guard must judge the bytes
 * the tool would get), then JSON, then with `object` a JSON object; blank input is `blank` when
 * given. The value, or the step that failed and why (for "json", `JSON.parse`'s message).
 */
export function decodeJson(
  bytes: Uint8Array,
  options: { object?: boolean; blank?: unknown } = {},
): { ok: true; value: unknown } | { ok: false; step: "utf8" | "json" | "object"; error: string } {
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch {
    return { ok: false, step: "utf8", error: "not valid UTF-8" };
  }
  if (options.blank !== undefined && text.trim() === "") return { ok: true, value: options.blank };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, step: "json", error: (error as Error).message };
  }
  if (options.object && !isRecord(value)) {
    return { ok: false, step: "object", error: "expected a JSON object" };
  }
  return { ok: true, value };
}

/**
 * Whether `bytes` may hold more than `max` JSON objects and arrays: counts the `{` and `[` bytes
 * (those in strings too) and stops past `max`. A native scan, so a caller can refuse an input
 * whose parse alone would outlast its deadline before starting it.
 */
export function mayHoldMoreContainers(bytes: Uint8Array, max: number): boolean {
  // Each one takes at least two bytes.
  if (bytes.length <= 2 * max) return false;
  let count = 0;
  for (const opening of [0x7b, 0x5b]) {
    for (let at = bytes.indexOf(opening); at !== -1; at = bytes.indexOf(opening, at + 1)) {
      if (++count > max) return true;
    }
  }
  return false;
}

/** True for a JSON object or YAML map (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/** An issue as every reader words it: `"path.to.field": message`, or `whole: message`. */
export function issueText(issue: SchemaIssue, whole?: string): string {
  const path = issue.path.map(String).join(".");
  if (path !== "") return `"${path}": ${issue.message}`;
  return whole === undefined ? issue.message : `${whole}: ${issue.message}`;
}

/**
 * Reads a handler's stdout (known not to be blank) as a `T`: the answer, or why it is not one
 * (`malformed JSON: ...`, `wrong answer: "field": ...`).
 */
export function parseAnswer<T>(
  schema: Schema<T>,
  stdout: string,
): { ok: true; answer: T } | { ok: false; error: string } {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const result = schema.safeParse(json.value);
  if (result.success) return { ok: true, answer: result.data };
  return { ok: false, error: `wrong answer: ${issueText(result.error.issues[0])}` };
}

/**
 * A value that does not have the shape a schema asks for, thrown by `parse` (`safeParse` returns
 * the same issues). The message words the first issue.
 *
 * @example
 * ```ts
 * import { SchemaError } from "./json.ts";
 * const err = new SchemaError([{ path: ["id"], message: 'expected an integer, got "3"' }]);
 * console.assert(err.message === '"id": expected an integer, got "3"');
 * ```
 */
export class SchemaError extends Error {
  /** Always `"SchemaError"`. */
  override name = "SchemaError";
  /** Everything wrong with the value, at least one issue. */
  readonly issues: readonly SchemaIssue[];
  /** `issues` as the schema found them. */
  constructor(issues: readonly SchemaIssue[]) {
    super(issueText(issues[0]));
    this.issues = issues;
  }
}

// The readers. Each reads a value at a path and pushes what is wrong onto a list, so one pass
// builds the value and finds every problem (a probe answer names them all); once it has pushed
// an issue, what it returns is meaningless.

type Path = readonly PropertyKey[];

/** A wire format's reader: its `Schema`, and the piece larger readers are built of. */
export interface Reader<T> extends Schema<T> {
  /** Reads `value`, found at `path`, pushing what is wrong onto `issues`. */
  read(value: unknown, path: Path, issues: SchemaIssue[]): T;
}

/** What a reader gives. */
export type Infer<R> = R extends Reader<infer T> ? T : never;

/** A reader from its `read` function: for a format of several shapes, told apart by their keys. */
export function reader<T>(read: Reader<T>["read"]): Reader<T> {
  const safeParse = (value: unknown): SafeParse<T> => {
    const issues: SchemaIssue[] = [];
    const data = read(value, [], issues);
    return issues.length === 0 ? { success: true, data } : { success: false, error: { issues } };
  };
  const parse = (value: unknown): T => {
    const result = safeParse(value);
    if (!result.success) throw new SchemaError(result.error.issues);
    return result.data;
  };
  return { read, safeParse, parse };
}

// Numbers and short texts as written, anything else by its kind.
function expected(what: string, value: unknown, path: Path, issues: SchemaIssue[]): void {
  const got = typeof value === "string"
    ? quoted(value.length > 60 ? `${value.slice(0, 59)}…` : value)
    : typeof value === "number" || typeof value === "boolean" || value === null
    ? String(value)
    : Array.isArray(value)
    ? `an array of ${value.length}`
    : `an ${typeof value}`;
  issues.push({ path, message: value === undefined ? "missing" : `expected ${what}, got ${got}` });
}

/** A string; `trim` trims it, `nonEmpty` refuses `""`. */
export function string(options: { trim?: boolean; nonEmpty?: boolean } = {}): Reader<string> {
  const what = options.nonEmpty ? "a non-empty string" : "a string";
  return reader((value, path, issues) => {
    if (typeof value === "string" && !(options.nonEmpty && value === "")) {
      return options.trim ? value.trim() : value;
    }
    expected(what, value, path, issues);
    return "";
  });
}

/** A number of at least `min`; with `integer`, a safe integer. */
export function number(options: { integer?: boolean; min?: number } = {}): Reader<number> {
  const { integer, min } = options;
  const what = (integer ? "an integer" : "a number") +
    (min === undefined ? "" : ` of at least ${min}`);
  return reader((value, path, issues) => {
    if (
      typeof value === "number" && (integer ? Number.isSafeInteger(value) : isFinite(value)) &&
      (min === undefined || value >= min)
    ) return value;
    if (
      integer && typeof value === "number" && !Number.isSafeInteger(value) &&
      (Number.isInteger(value) || !isFinite(value))
    ) {
      // JSON.parse has already rounded it: the digits it would print are not the ones sent.
      issues.push({
        path,
        message: `expected ${what}, got one too large to hold exactly (past 2^53)`,
      });
      return 0;
    }
    expected(what, value, path, issues);
    return 0;
  });
}

/** `true` or `false`. */
export function boolean(): Reader<boolean> {
  return reader((value, path, issues) => {
    if (typeof value === "boolean") return value;
    expected("a boolean", value, path, issues);
    return false;
  });
}

/** One of `values`, after `normalize` (trimming, say) when given. */
export function oneOf<const V extends readonly string[]>(
  values: V,
  normalize: (text: string) => string = (text) => text,
): Reader<V[number]> {
  const list = values.map((v) => `"${v}"`);
  const what = list.length === 1 ? list[0] : `${list.slice(0, -1).join(", ")} or ${list.at(-1)}`;
  return reader((value, path, issues) => {
    const text = typeof value === "string" ? normalize(value) : "";
    if (!values.includes(text)) expected(what, value, path, issues);
    return text;
  });
}

/** Any value, kept as it is. */
export function unknown(): Reader<unknown> {
  return reader((value) => value);
}

/** A JSON object of any keys and values, kept as it is. */
export function record(): Reader<Record<string, unknown>> {
  return reader((value, path, issues) => {
    if (isRecord(value)) return value;
    expected("an object", value, path, issues);
    return {};
  });
}

/** An array of `item`s. */
export function array<T>(item: Reader<T>): Reader<T[]> {
  return reader((value, path, issues) => {
    if (Array.isArray(value)) return value.map((v, i) => item.read(v, [...path, i], issues));
    expected("an array", value, path, issues);
    return [];
  });
}

/** An array of exactly these items. */
export function tuple<const T extends readonly unknown[]>(
  items: { [K in keyof T]: Reader<T[K]> },
): Reader<{ -readonly [K in keyof T]: T[K] }> {
  return reader((value, path, issues) => {
    const fits = Array.isArray(value) && value.length === items.length;
    if (!fits) expected(`an array of ${items.length}`, value, path, issues);
    const read = fits ? items.map((item, i) => item.read(value[i], [...path, i], issues)) : [];
    return read as { -readonly [K in keyof T]: T[K] };
  });
}

/** `inner`, or null. */
export function nullable<T>(inner: Reader<T>): Reader<T | null> {
  return reader((value, path, issues) => value === null ? null : inner.read(value, path, issues));
}

/**
 * `inner`, or `fallback` when the value is left out; with `orNull`, when it is null too (Go's
 * `encoding/json` leaves a field's zero value for a null).
 */
export function orDefault<T>(
  inner: Reader<T>,
  fallback: NoInfer<T>,
  options: { orNull?: boolean } = {},
): Reader<T> {
  return reader((value, path, issues) =>
    value === undefined || (options.orNull && value === null)
      ? fallback
      : inner.read(value, path, issues)
  );
}

/** A field that may be left out. */
interface Optional<T> extends Reader<T | undefined> {
  readonly optional: true;
}

/**
 * `inner`, or nothing: an object leaves the key out when the value is left out (with `orNull`,
 * when it is null too).
 */
export function optional<T>(inner: Reader<T>, options: { orNull?: boolean } = {}): Optional<T> {
  return { ...orDefault<T | undefined>(inner, undefined, options), optional: true };
}

type Shape = Record<string, Reader<unknown>>;
type OptionalKeys<S> = { [K in keyof S]: S[K] extends { optional: true } ? K : never }[keyof S];
type Flat<T> = { [K in keyof T]: T[K] };
type ObjectOf<S extends Shape> = Flat<
  & { [K in Exclude<keyof S, OptionalKeys<S>>]: Infer<S[K]> }
  & { [K in OptionalKeys<S>]?: Exclude<Infer<S[K]>, undefined> }
>;

/** Options of {@linkcode object}. */
export interface ObjectOptions {
  /** A key the shape does not name is an issue; by default it is dropped. */
  strict?: boolean;
  /**
   * Keys are matched as Go's `encoding/json` matches struct fields: exactly, or else in any case
   * with simple folding (`ſ` is an `s`, the Kelvin sign a `k`), the last match winning, a `null`
   * leaving the field out; a `null` object reads as `{}`.
   */
  go?: boolean;
}

/** An object of the fields of `shape`, each read by its reader. */
export function object<S extends Shape>(
  shape: S,
  options: ObjectOptions = {},
): Reader<ObjectOf<S>> {
  const keys = Object.keys(shape);
  return reader((value, path, issues) => {
    if (options.go && value === null) value = {};
    if (!isRecord(value)) {
      expected("an object", value, path, issues);
      return {} as ObjectOf<S>;
    }
    const fields = options.go ? goFields(value, keys) : value;
    const out: Record<string, unknown> = {};
    for (const key of keys) {
      const read = shape[key].read(fields[key], [...path, key], issues);
      if (read !== undefined) out[key] = read;
    }
    for (const key of options.strict ? Object.keys(value) : []) {
      if (!Object.hasOwn(shape, key)) issues.push({ path, message: `unknown key ${quoted(key)}` });
    }
    return out as ObjectOf<S>;
  });
}

function goFields(object: Record<string, unknown>, fields: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === null) continue;
    let field = fields.find((f) => f === key);
    if (field === undefined) {
      const folded = goFold(key);
      field = fields.find((f) => f === folded);
    }
    if (field !== undefined) out[field] = value;
  }
  return out;
}

/**
 * `key` folded as Go's `encoding/json` folds it to match a lower-case field name: lower-cased,
 * `ſ` an `s`, the Kelvin sign a `k`.
 */
export function goFold(key: string): string {
  let folded = "";
  for (const c of key) folded += c === "\u017f" ? "s" : c === "\u212a" ? "k" : c.toLowerCase();
  return folded;
}
