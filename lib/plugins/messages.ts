/**
 * Every warning text the loader and the lint produce, in one place so they read alike: capital
 * first letter, no final period, quoted values, a colon before details, a hint when the fix is
 * known.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import type { LoadWarning } from "./types.ts";
import type { z } from "npm:zod@^4.1.0";
import { kindOf, quoted } from "../text.ts";

/** A problem found in one manifest, before it is given a line and column. */
export interface Problem {
  /** The full warning text. */
  message: string;
  /** Where in the manifest's data: keys and indexes from the root. */
  at: readonly PropertyKey[];
  /** Point at the last key rather than its value. */
  key?: boolean;
  /** For a dropped entry, the short form used when the whole plugin is skipped. */
  dropped?: string;
}

/** A dropped entry (`what`: `hook "task.done"`, `action #2`): `Dropped hook "task.done": ...`. */
export function dropped(
  what: string,
  reason: string,
  at: readonly PropertyKey[],
  hint?: string,
): Problem {
  const short = `${what}: ${reason}`;
  return { message: `Dropped ${short}${hint ? ` (hint: ${hint})` : ""}`, at, dropped: short };
}

/** The one warning of a skipped plugin: `Skipped plugin "x" in "team/x": reason`. */
export function skipped(name: string | null, dir: string, reason: string): string {
  return `Skipped plugin${name === null ? "" : ` ${quoted(name)}`} in ${quoted(dir)}: ${reason}`;
}

/** Why a plugin is skipped, as the text after `Skipped plugin ... :`. */
export const REASONS = {
  notAMap: "plugin.yaml must be a map of keys to values",
  empty: "plugin.yaml is empty",
  noName: '"name" is missing or empty',
  nameNotText: '"name" must be a string',
  nameControl: '"name" contains control characters',
  nothingUsable: (drops: string[]) => {
    const base = "no usable hook, action, service, workflow or routine";
    if (drops.length === 0) return base;
    const shown = drops.slice(0, 3).join("; ");
    const more = drops.length > 3 ? `; and ${drops.length - 3} more` : "";
    return `${base} (dropped ${shown}${more})`;
  },
} as const;

/**
 * A plugin whose name an earlier plugin (in `first`) already has: both load, as in ty, and a
 * command naming the plugin takes the first.
 */
export function sharedName(name: string, first: string): string {
  return `Plugin name ${quoted(name)} is also used by the plugin in ${quoted(first)}: both load, ` +
    `as in ty, and "plugins run" (or any command naming it) takes that one (hint: rename one)`;
}

/** An unknown key, with a suggestion when one is close. */
export function unknownKey(key: string, where: string, suggestion?: string): string {
  const place = where === "" ? "" : ` in ${quoted(where)}`;
  const guess = suggestion ? `: did you mean ${quoted(suggestion)}?` : "";
  return `Unknown key ${quoted(key)}${place}${guess}`;
}

/** A hook event name close to, but not equal to, a known event: probably a typo. */
export function unknownEvent(event: string, suggestion: string): string {
  return `Unknown event ${quoted(event)}: did you mean ${quoted(suggestion)}?`;
}

/**
 * A script that loads, as ty loads it, but cannot be started (ty's exec fails the same way):
 * `subject` names it (`Action "sync": script "x.sh"`), `path` is where it is.
 */
export function cannotStart(subject: string, path: string, problem: "no-shebang" | "crlf"): string {
  if (problem === "no-shebang") {
    return `${subject} does not start with a "#!" line naming an interpreter, so it cannot be ` +
      `started (exec format error, as under ty) (hint: make its first line "#!/bin/sh", or ` +
      "the interpreter it is written for)";
  }
  return `${subject} has a "#!" line ending in a carriage return (CRLF line ends), so it cannot ` +
    `be started (hint: dos2unix ${quoted(path)}, or sed -i 's/\\r$//' ${quoted(path)})`;
}

/**
 * A script or service `cwd` (`field`) written as `written` that leads out of its plugin dir, to
 * `real`: loaded, as ty loads it, but reported by `plugins validate`.
 */
export function outsideDir(what: string, field: string, written: string, real: string): string {
  return `${what}: ${field} ${quoted(written)} resolves outside the plugin dir (to ${
    quoted(real)
  }), so it does not travel with the plugin`;
}

/** Logs each warning at `warn` level. */
export function logWarnings(log: Logger, warnings: readonly LoadWarning[]): void {
  for (const w of warnings) {
    log.log("warn", w.message, {
      plugin: w.plugin ?? undefined,
      path: w.path,
      line: w.line ?? undefined,
      column: w.column ?? undefined,
    });
  }
}

/** A zod issue (zod is imported for its types only). */
export type Issue = z.core.$ZodIssue;

/** Writes a data path the way a reader finds it in YAML: `actions[0].command`. */
export function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)
    .join("");
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  array: "a list",
  object: "a map",
  record: "a map",
};

/**
 * One issue, e.g. `"restart" must be one of "always", "on-failure", "never", not "sometimes"`
 * (parse with `{ reportInput: true }` so the value can be named); `prefix` is the value's path.
 */
export function describeIssue(issue: Issue, prefix: readonly PropertyKey[] = []): string {
  const path = [...prefix, ...issue.path];
  const field = path.length ? quoted(pathText(path)) : "plugin.yaml";
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case "invalid_type":
      if (input === undefined) return `${field} is missing`;
      return `${field} must be ${EXPECTED[issue.expected] ?? issue.expected}, not ${kindOf(input)}`;
    case "too_small":
      return issue.origin === "string" && issue.minimum === 1
        ? `${field} must not be empty`
        : `${field} is too small: ${issue.message}`;
    case "invalid_value":
      return `${field} must be one of ${issue.values.map((v) => quoted(String(v))).join(", ")}` +
        (typeof input === "string" ? `, not ${quoted(input)}` : "");
    case "invalid_format":
      return `${field} ${issue.message}` +
        (typeof input === "string" ? `, not ${quoted(input)}` : "");
    case "invalid_key":
      return `Invalid key ${quoted(String(path.at(-1)))} in ${quoted(pathText(path.slice(0, -1)))}`;
    case "unrecognized_keys":
      return `Unknown ${issue.keys.length === 1 ? "key" : "keys"} ${
        issue.keys.map(quoted).join(", ")
      }${path.length ? ` in ${field}` : ""}`;
    default:
      return `${field}: ${issue.message}`;
  }
}
