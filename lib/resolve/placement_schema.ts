/**
 * The `task.placement` wire formats. Loaded lazily: zod is only paid for when a placement
 * handler is installed.
 *
 * @module
 */

import { z } from "zod";

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
export const PlacementRequestSchema: z.ZodObject<{
  event: z.ZodLiteral<"task.placement">;
  task: z.ZodObject<{
    id: z.ZodDefault<z.ZodNumber>;
    title: z.ZodDefault<z.ZodString>;
    project: z.ZodDefault<z.ZodString>;
    repo_path: z.ZodDefault<z.ZodString>;
    executor: z.ZodDefault<z.ZodString>;
    remote_required: z.ZodOptional<z.ZodBoolean>;
  }>;
}> = z.object({
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
});

/**
 * The request as sent (`remote_required` only when true).
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
export type PlacementRequest = z.output<typeof PlacementRequestSchema>;

// A JSON null counts as empty, as in ty: Go leaves a string untouched when it decodes null.
const text = z.string().nullish().transform((value) => (value ?? "").trim());

/**
 * Zod schema of a placement handler's answer: strings only (trimmed; missing or null = empty),
 * extra keys ignored. An empty `target` means "run locally".
 *
 * @example
 * ```ts
 * import { PlacementAnswerSchema } from "./placement_schema.ts";
 * const a = PlacementAnswerSchema.parse({ target: " gpu-1 ", workdir: "~/src", cost: 3 });
 * console.assert(a.target === "gpu-1" && a.workdir === "~/src" && a.reason === "");
 * ```
 */
export const PlacementAnswerSchema: z.ZodObject<{
  target: z.ZodPipe<
    z.ZodOptional<z.ZodNullable<z.ZodString>>,
    z.ZodTransform<string, string | null | undefined>
  >;
  workdir: z.ZodPipe<
    z.ZodOptional<z.ZodNullable<z.ZodString>>,
    z.ZodTransform<string, string | null | undefined>
  >;
  reason: z.ZodPipe<
    z.ZodOptional<z.ZodNullable<z.ZodString>>,
    z.ZodTransform<string, string | null | undefined>
  >;
}> = z.object({ target: text, workdir: text, reason: text });

/**
 * A validated placement answer.
 *
 * @example
 * ```ts
 * import { type PlacementAnswer, PlacementAnswerSchema } from "./placement_schema.ts";
 * const answer: PlacementAnswer = PlacementAnswerSchema.parse({ target: "gpu-1", workdir: null });
 * console.assert(answer.workdir === "" && answer.reason === "");
 * ```
 */
export type PlacementAnswer = z.output<typeof PlacementAnswerSchema>;

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
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch (error) {
    return { ok: false, error: `malformed JSON: ${(error as Error).message}` };
  }
  const result = PlacementAnswerSchema.safeParse(value);
  if (result.success) return { ok: true, answer: result.data };
  const issue = result.error.issues[0];
  const where = issue.path.length ? `"${issue.path.join(".")}"` : "answer";
  return { ok: false, error: `wrong type: ${where}: ${issue.message}` };
}
