/**
 * Text from outside (names, paths, commands, script output) as tyhooks shows it: the one class of
 * control characters, and the ways a message quotes a value, cuts a script's output and
 * suggests the word that was probably meant.
 *
 * @module
 */

// C0, DEL and C1: each one moves a terminal's cursor, starts an escape sequence (ESC, or its
// one-character form U+009B) or breaks a line, a listing or a log parser.
const CONTROL_CLASS = "[\\x00-\\x1f\\x7f-\\x9f]";
const CONTROL = new RegExp(CONTROL_CLASS);
const CONTROL_RUNS = new RegExp(`${CONTROL_CLASS}+`, "g");
// What JSON.stringify leaves unescaped of the class.
const DEL_AND_C1 = /[\x7f-\x9f]/g;

const ESCAPED = Array.from(
  { length: 0xa0 },
  (_, code) => `\\x${code.toString(16).padStart(2, "0")}`,
);

/** Whether `text` holds a control character (C0, DEL or C1: NUL, newline, ESC, U+009B...). */
export function hasControl(text: string): boolean {
  return CONTROL.test(text);
}

/** `text` with each control character written as `\x1b`, as terminals and logs show outside text. */
export function escapeControl(text: string): string {
  return text.replace(CONTROL_RUNS, escapeRun);
}

/** {@linkcode escapeControl}, newlines and tabs kept: a message of several lines for a reader. */
export function escapeControlKeepingLines(text: string): string {
  return text.replace(CONTROL_RUNS, (run) => run.replace(/[^\n\t]+/g, escapeRun));
}

// A run at a time, and a run of one character as one repeat: a service may print hundreds of MB
// of NULs, which one call per character would take minutes to escape.
function escapeRun(run: string): string {
  const first = run.charCodeAt(0);
  let same = 1;
  while (same < run.length && run.charCodeAt(same) === first) same++;
  if (same === run.length) return ESCAPED[first].repeat(run.length);
  let escaped = "";
  for (let i = 0; i < run.length; i++) escaped += ESCAPED[run.charCodeAt(i)];
  return escaped;
}

/** `text` without its control characters (C0, DEL, C1). */
export function stripControl(text: string): string {
  return text.replace(CONTROL_RUNS, "");
}

/**
 * `value` as a message quotes it: a JSON string, with DEL and C1 escaped too (`\u009b`), so a
 * quoted value never carries a control character to a terminal.
 */
export function quoted(value: string): string {
  return escapeJsonControl(JSON.stringify(value));
}

/**
 * `value` as JSON text ending in a newline, DEL and C1 escaped too: a document tyhooks prints
 * carries no control character to a terminal (`indent`: spaces a level, 0 for one line).
 */
export function jsonText(value: unknown, indent = 0): string {
  return escapeJsonControl(JSON.stringify(value, null, indent)) + "\n";
}

/** `JSON.stringify`'s text with DEL and C1 escaped too (`\u009b`): the same value, no control. */
export function escapeJsonControl(json: string): string {
  return json.replace(DEL_AND_C1, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** What kind of value `value` is (as YAML and JSON name them), for "must be a map, not a list". */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return "empty";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return `a ${typeof value}`;
}

/** A script's output as a log line shows it: trimmed, at most 500 characters; none when blank. */
export function excerpt(output: string): string | undefined {
  return output.trim().slice(0, 500) || undefined;
}

/** The candidate closest to `word`, if any is within `max` edits (and is not `word`). */
export function closest(word: string, candidates: readonly string[], max = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const candidate of candidates) {
    if (candidate === word) return undefined;
    if (Math.abs(candidate.length - word.length) > max) continue;
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  // Words here are short keys: an O(len²) table is fine, and long input is no typo of one.
  if (a.length > 64) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
    }
    previous = current;
  }
  return previous[b.length];
}
