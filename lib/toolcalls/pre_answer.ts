/**
 * Reading a `pre_tool_call` hook's answer on the spawn-time path without loading zod: a
 * well-formed answer (`action` allow or block in any case and spacing, `reason` a string, null
 * or missing) is built directly; anything else goes to the zod schema for the precise error. A
 * test keeps both readings equal.
 *
 * @module
 */

import type { PreToolAnswer } from "./tool_schema.ts";
import { parseJson } from "../_json.ts";

/**
 * Parses a pre hook's stdout (known not to be blank).
 *
 * @param stdout The hook's output.
 * @returns The answer, or why it is not one.
 * @example
 * ```ts
 * import { readPreAnswer } from "./pre_answer.ts";
 * const got = await readPreAnswer('{"action": " Block ", "reason": "rm -rf"}');
 * console.assert(got.ok && got.answer.action === "block");
 * ```
 */
export async function readPreAnswer(
  stdout: string,
): Promise<{ ok: true; answer: PreToolAnswer } | { ok: false; error: string }> {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const value = json.value;
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const { action, reason } = value as Record<string, unknown>;
    const verb = typeof action === "string" ? action.trim().toLowerCase() : undefined;
    const text = reason ?? "";
    if ((verb === "allow" || verb === "block") && typeof text === "string") {
      return { ok: true, answer: { action: verb, reason: text.trim() } };
    }
  }
  const { parsePreAnswer } = await import("./tool_schema.ts");
  return parsePreAnswer(stdout);
}
