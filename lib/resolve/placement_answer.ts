/**
 * Reading a placement handler's answer on the spawn-time path without loading zod, as Go's
 * `encoding/json` reads it into ty's struct: keys matched in any case, `null` (the whole answer
 * or a field) read as empty, extra keys ignored. A well-formed answer is built directly; anything
 * else goes to the zod schema, which says precisely what is wrong. A test keeps both readings
 * equal.
 *
 * @module
 */

import type { PlacementAnswer } from "./placement_schema.ts";
import { parseJson } from "../_json.ts";
import { goFields, isJsonObject } from "./_go_json.ts";

/** The answer's fields. */
export const PLACEMENT_FIELDS = ["target", "workdir", "reason"] as const;

/**
 * Parses a placement handler's stdout (known not to be blank).
 *
 * @param stdout The handler's output.
 * @returns The answer, or why it is not one (`malformed JSON: ...`, `wrong type: "target": ...`).
 */
export async function readPlacementAnswer(
  stdout: string,
): Promise<{ ok: true; answer: PlacementAnswer } | { ok: false; error: string }> {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const value = json.value;
  if (value === null) return { ok: true, answer: { target: "", workdir: "", reason: "" } };
  if (isJsonObject(value)) {
    const fields = goFields(value, PLACEMENT_FIELDS);
    const answer = { target: "", workdir: "", reason: "" };
    let wellFormed = true;
    for (const field of PLACEMENT_FIELDS) {
      const text = fields[field] ?? "";
      if (typeof text === "string") answer[field] = text.trim();
      else wellFormed = false;
    }
    if (wellFormed) return { ok: true, answer };
  }
  const { parsePlacementAnswer } = await import("./placement_schema.ts");
  return parsePlacementAnswer(stdout);
}
