/**
 * The `task.placement` wire formats. Loaded lazily: zod is only paid for when a placement
 * handler is installed.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "../_type_check.ts";
import type { PlacementInfo } from "./placement.ts";
import { parseJson } from "../_json.ts";
import { goFields, isJsonObject } from "./_go_json.ts";
import { PLACEMENT_FIELDS } from "./placement_answer.ts";

/**
 * Zod schema of the request a placement handler reads on stdin.
 *
 * @example
 * ```ts
 * import { PlacementRequestSchema } from "./placement_schema.ts";
 * const req = PlacementRequestSchema.parse({ event: "task.placement", task: { id: 1 } });
 * console.assert(req.task.title === "" && req.task.remote_required === undefined);
 * ```
 */
export const PlacementRequestSchema = z.object({
  event: z.literal("task.placement"),
  task: z.object({
    id: z.number().int().nonnegative().default(0),
    title: z.string().default(""),
    project: z.string().default(""),
    repo_path: z.string().default(""),
    executor: z.string().default(""),
    /** Sent only when true: the host must not run the task locally. */
    remote_required: z.boolean().optional(),
  }),
}) satisfies z.ZodType<PlacementRequest>;

/**
 * The request a placement handler reads on stdin, as sent (`remote_required` only when true).
 *
 * @example
 * ```ts
 * import type { PlacementRequest } from "./placement_schema.ts";
 * const request: PlacementRequest = {
 *   event: "task.placement",
 *   task: { id: 7, title: "Train", project: "ml", repo_path: "/src/ml", executor: "claude" },
 * };
 * console.assert(!("remote_required" in request.task));
 * ```
 */
export interface PlacementRequest {
  /** Always `task.placement`. */
  event: "task.placement";
  /** The task to place: only these fields, so that a handler never learns its body. */
  task: PlacementInfo;
}

// A JSON null counts as empty, as in ty: Go leaves a string untouched when it decodes null.
const text = z.string().nullish().transform((value) => (value ?? "").trim());

/**
 * Zod schema of a placement handler's answer: strings only (trimmed; missing or null = empty),
 * keys in any case, extra keys ignored; a `null` answer is empty. An empty `target` means "run locally".
 *
 * @example
 * ```ts
 * import { PlacementAnswerSchema } from "./placement_schema.ts";
 * const a = PlacementAnswerSchema.parse({ target: " gpu-1 ", workdir: "~/src", cost: 3 });
 * console.assert(a.target === "gpu-1" && a.workdir === "~/src" && a.reason === "");
 * ```
 */
export const PlacementAnswerSchema = z.preprocess(
  // As Go's encoding/json reads ty's struct: keys in any case, null as empty.
  (value) => value === null ? {} : isJsonObject(value) ? goFields(value, PLACEMENT_FIELDS) : value,
  z.object({ target: text, workdir: text, reason: text }),
) satisfies z.ZodType<PlacementAnswer>;

// The schemas validate, the interfaces document: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof PlacementRequestSchema>, PlacementRequest>;
true satisfies Same<z.output<typeof PlacementAnswerSchema>, PlacementAnswer>;

/**
 * A placement handler's answer, validated: every field a trimmed string, `""` when missing or
 * null.
 *
 * @example
 * ```ts
 * import { type PlacementAnswer, PlacementAnswerSchema } from "./placement_schema.ts";
 * const answer: PlacementAnswer = PlacementAnswerSchema.parse({ target: "gpu-1", workdir: null });
 * console.assert(answer.workdir === "" && answer.reason === "");
 * ```
 */
export interface PlacementAnswer {
  /** The host to run on; `""` = run locally. */
  target: string;
  /** A path on the target host (a leading `~` is left alone); may be empty. */
  workdir: string;
  /** Why, in words a person can read; may be empty. */
  reason: string;
}

/**
 * Parses a placement handler's stdout (known not to be blank).
 *
 * @param stdout The handler's output.
 * @returns The answer, or why it is not one (`malformed JSON: ...`, `"target": ...`).
 * @example
 * ```ts
 * import { parsePlacementAnswer } from "./placement_schema.ts";
 * const bad = parsePlacementAnswer('{"target": 7}');
 * console.assert(!bad.ok && bad.error.startsWith('wrong type: "target"'));
 * ```
 */
export function parsePlacementAnswer(
  stdout: string,
): { ok: true; answer: PlacementAnswer } | { ok: false; error: string } {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const value = json.value;
  const result = PlacementAnswerSchema.safeParse(value);
  if (result.success) return { ok: true, answer: result.data };
  const issue = result.error.issues[0];
  const where = issue.path.length ? `"${issue.path.join(".")}"` : "answer";
  return { ok: false, error: `wrong type: ${where}: ${issue.message}` };
}
