/**
 * How tyhooks reads the JSON it is given (a script's answer, a task, a request body): one wording
 * for malformed JSON and for a wrong field, and Go's way of matching field names, since that is
 * how ty reads the same answers.
 *
 * @module
 */

import type { Schema, SchemaIssue } from "./schema.ts";

/** Parses `text` as JSON: the value, or `malformed JSON: <why>`. */
export function parseJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: `malformed JSON: ${(error as Error).message}` };
  }
}

/** Folds one character as Go's case-insensitive field match does, for the letters of our fields. */
function foldChar(c: string): string {
  if (c === "\u017f") return "s";
  if (c === "\u212a") return "k";
  return c.toLowerCase();
}

function fold(key: string): string {
  let out = "";
  for (const c of key) out += foldChar(c);
  return out;
}

/**
 * The values of `fields` (lower case) in `object`, matched as Go's `encoding/json` matches struct
 * fields, since that is how ty reads handler answers: a key matches a field exactly or, failing
 * that, case-insensitively with Unicode simple folding (`ſ` is an `s`, the Kelvin sign a `k`); the
 * last matching key wins; a `null` leaves the field absent. Other keys are ignored.
 */
export function goFields<F extends string>(
  object: Record<string, unknown>,
  fields: readonly F[],
): Partial<Record<F, unknown>> {
  const out: Partial<Record<F, unknown>> = {};
  for (const [key, value] of Object.entries(object)) {
    if (value === null) continue;
    const exact = fields.find((f) => f === key);
    const field = exact ?? fields.find((f) => f === fold(key));
    if (field !== undefined) out[field] = value;
  }
  return out;
}

/** True for a JSON object or YAML map (not an array, not null). */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}

/**
 * A rejected value's first problem as every reader words it: `"path.to.field": message`, or
 * `whole` and the message when the value itself is wrong.
 */
export function issueText(
  issue: { readonly path: readonly PropertyKey[]; readonly message: string },
  whole: string,
): string {
  const path = issue.path.map(String).join(".");
  return `${path === "" ? whole : `"${path}"`}: ${issue.message}`;
}

/**
 * Reads a handler's stdout (known not to be blank) as a `T`: the answer, or why it is not one
 * (`malformed JSON: ...`, `wrong type: "field": ...`, or what `explain` says of the first issue).
 */
export function parseAnswer<T>(
  schema: Schema<T>,
  stdout: string,
  explain: (issue: SchemaIssue, value: unknown) => string | undefined = () => undefined,
): { ok: true; answer: T } | { ok: false; error: string } {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const result = schema.safeParse(json.value);
  if (result.success) return { ok: true, answer: result.data };
  const issue = result.error.issues[0];
  return {
    ok: false,
    error: explain(issue, json.value) ?? `wrong type: ${issueText(issue, "answer")}`,
  };
}
