/**
 * Reading a placement handler's answer on the spawn-time path without loading zod: a
 * well-formed answer (an object whose `target`, `workdir` and `reason` are strings, null or
 * missing) is built directly; anything else goes to the zod schema, which says precisely what is
 * wrong. A test keeps both readings equal.
 *
 * @module
 */

import type { PlacementAnswer } from "./placement_schema.ts";
import { parseJson } from "../_json.ts";

const FIELDS = ["target", "workdir", "reason"] as const;

/**
 * Parses a placement handler's stdout (known not to be blank).
 *
 * @param stdout The handler's output.
 * @returns The answer, or why it is not one (`malformed JSON: ...`, `wrong type: "target": ...`).
 * @example
 * ```ts
 * import { readPlacementAnswer } from "./placement_answer.ts";
 * const got = await readPlacementAnswer('{"target": " gpu-1 ", "cost": 3}');
 * console.assert(got.ok && got.answer.target === "gpu-1" && got.answer.reason === "");
 * ```
 */
export async function readPlacementAnswer(
  stdout: string,
): Promise<{ ok: true; answer: PlacementAnswer } | { ok: false; error: string }> {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const value = json.value;
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const input = value as Record<string, unknown>;
    const answer = { target: "", workdir: "", reason: "" };
    let wellFormed = true;
    for (const field of FIELDS) {
      const text = input[field] ?? "";
      if (typeof text === "string") answer[field] = text.trim();
      else wellFormed = false;
    }
    if (wellFormed) return { ok: true, answer };
  }
  const { parsePlacementAnswer } = await import("./placement_schema.ts");
  return parsePlacementAnswer(stdout);
}
