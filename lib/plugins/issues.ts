/**
 * Turns zod issues into the project's message style, naming the field as it is written in the
 * manifest (`"actions[0].command" is missing`), whatever zod's own wording is.
 *
 * @module
 */

import type { z } from "zod";
import { quote } from "./messages.ts";

/** A zod issue (zod is imported for its types only). */
export type Issue = z.core.$ZodIssue;

/**
 * Writes a data path the way a reader finds it in YAML: `actions[0].command`.
 */
export function pathText(path: readonly PropertyKey[]): string {
  return path.map((p, i) => typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)
    .join("");
}

/**
 * What kind of YAML value `value` is, for "must be a map, not a list".
 */
export function kindOf(value: unknown): string {
  if (value === null || value === undefined) return "empty";
  if (Array.isArray(value)) return "a list";
  if (typeof value === "object") return "a map";
  return `a ${typeof value}`;
}

const EXPECTED: Record<string, string> = {
  string: "a string",
  array: "a list",
  object: "a map",
  record: "a map",
};

/**
 * Describes one issue. Parse with `{ reportInput: true }` so the offending value can be named.
 *
 * @param prefix Path of the parsed value inside the manifest, prepended to the issue's path.
 * @returns E.g. `"restart" must be one of "always", "on-failure", "never", not "sometimes"`.
 */
export function describeIssue(issue: Issue, prefix: readonly PropertyKey[] = []): string {
  const path = [...prefix, ...issue.path];
  const field = path.length ? quote(pathText(path)) : "plugin.yaml";
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
      return `${field} must be one of ${issue.values.map((v) => quote(String(v))).join(", ")}` +
        (typeof input === "string" ? `, not ${quote(input)}` : "");
    case "invalid_format":
      return `${field} ${issue.message}` +
        (typeof input === "string" ? `, not ${quote(input)}` : "");
    case "invalid_key":
      return `Invalid key ${quote(String(path.at(-1)))} in ${quote(pathText(path.slice(0, -1)))}`;
    case "unrecognized_keys":
      return `Unknown ${issue.keys.length === 1 ? "key" : "keys"} ${
        issue.keys.map(quote).join(", ")
      }${path.length ? ` in ${field}` : ""}`;
    default:
      return `${field}: ${issue.message}`;
  }
}
