/**
 * Small helpers shared across lib/: reading a script's JSON answer (the one way every reader
 * words malformed JSON and a wrong field), Go's field matching, a concurrency bound, did-you-mean,
 * and sshd's StrictModes checks.
 *
 * @module
 */

import { dirname, resolve } from "./_path.ts";
import type { Schema, SchemaIssue } from "./wire/schema.ts";

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

/** Concatenates `chunks` (whose lengths add up to `length`); a single chunk is returned as is. */
export function concat(chunks: Uint8Array[], length: number): Uint8Array {
  if (chunks.length === 1) return chunks[0];
  const out = new Uint8Array(length);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.length;
  }
  return out;
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

/** A script's output as a log line shows it: trimmed, at most 500 characters; none when blank. */
export function excerpt(output: string): string | undefined {
  return output.trim().slice(0, 500) || undefined;
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

/** Runs `task` once a slot is free. */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/**
 * A bound of `max` tasks at once (at least 1), started in the order they arrive: many file checks
 * or hook runs at once, never so many that the file descriptors run out.
 */
export function createLimit(max: number): Limit {
  const slots = Math.max(1, Math.floor(max));
  let running = 0;
  const waiting: (() => void)[] = [];
  return async function limit<T>(task: () => Promise<T>): Promise<T> {
    if (running >= slots) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      // Hand the slot straight to the next task, so `running` never overshoots.
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
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

// sshd's `StrictModes`: what another user could write is not trusted to decide what runs. For a
// plugin dir or script the loader still loads it (as ty does) but warns, and `plugins validate`
// reports it; the daemon refuses a socket dir another user could change.

/**
 * Why `info` (of a plugin dir or script at `path`) is not safe, and the fix; null when it is:
 * writable by group or others, or owned by a user other than the current one or root. Without
 * the user id (`--allow-sys`) only the mode is checked.
 */
export function unsafeMode(
  info: Deno.FileInfo,
  path: string,
): { reason: string; hint: string } | null {
  const mode = (info.mode ?? 0) & 0o777;
  if ((mode & 0o022) !== 0) {
    return {
      reason: `is writable by group or others (mode ${mode.toString(8).padStart(4, "0")})`,
      hint: `chmod go-w ${JSON.stringify(path)}`,
    };
  }
  const me = currentUid();
  if (me !== null && info.uid !== null && info.uid !== me && info.uid !== 0) {
    return {
      reason: `is owned by user ${info.uid}, not by the current user (${me}) or root`,
      hint: `chown ${me} ${JSON.stringify(path)}`,
    };
  }
  return null;
}

/**
 * Why someone other than the user (or root) could replace an entry of `dir`, or null when nobody
 * can. Every directory on the way, as written and as resolved, must be owned by the user or root
 * and, when group or others may write to it, sticky (as `/tmp` is, so only an entry's owner can
 * remove or rename it); a symbolic link on the way must be the user's or root's. Requires `--allow-read`.
 */
export function unsafeDirReason(dir: string): string | null {
  const me = currentUid();
  if (me === null) return "the user id is not known";
  let real: string;
  try {
    real = Deno.realPathSync(dir);
  } catch (error) {
    return `"${dir}" cannot be resolved: ${(error as Error).message}`;
  }
  for (const path of new Set([...chain(resolve(dir)), ...chain(real)])) {
    let info: Deno.FileInfo;
    try {
      info = Deno.lstatSync(path);
    } catch (error) {
      return `"${path}" cannot be checked: ${(error as Error).message}`;
    }
    if (info.uid !== null && info.uid !== me && info.uid !== 0) {
      return `"${path}" belongs to another user (uid ${info.uid})`;
    }
    if (info.isSymlink || info.mode === null) continue;
    const sticky = (info.mode & 0o1000) !== 0;
    if ((info.mode & 0o022) !== 0 && !sticky) {
      const mode = (info.mode & 0o7777).toString(8).padStart(4, "0");
      return `"${path}" is writable by group or others and not sticky (mode ${mode})`;
    }
  }
  return null;
}

function chain(dir: string): string[] {
  const paths = [dir];
  for (let up = dirname(dir); up !== paths.at(-1); up = dirname(up)) paths.push(up);
  return paths;
}

let uid: number | null | undefined;

// Asked for every plugin dir and script a load checks: the op is looked up once.
function currentUid(): number | null {
  if (uid !== undefined) return uid;
  try {
    return uid = Deno.uid();
  } catch {
    return null;
  }
}
