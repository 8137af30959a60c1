/**
 * The tool-call wire formats: the call a host asks about, the request a hook reads on stdin, and
 * a `pre_tool_call` hook's answer. Loaded lazily: zod is only paid for when a hook answers.
 *
 * @module
 */

import { z } from "zod";

/**
 * Zod schema of a tool call as a host describes it (`POST /v1/tool/pre` bodies, the `tool pre`
 * flags). `args` is any JSON value; the rest default to empty.
 *
 * @example
 * ```ts
 * import { ToolCallSchema } from "./tool_schema.ts";
 * const call = ToolCallSchema.parse({ tool: "bash", args: { command: "ls" } });
 * console.assert(call.platform === "" && call.user_id === "");
 * ```
 */
export const ToolCallSchema: z.ZodObject<{
  tool: z.ZodString;
  args: z.ZodDefault<z.ZodUnknown>;
  platform: z.ZodDefault<z.ZodString>;
  user_id: z.ZodDefault<z.ZodString>;
}> = z.object({
  tool: z.string().min(1),
  args: z.unknown().default({}),
  platform: z.string().default(""),
  user_id: z.string().default(""),
});

/**
 * Zod schema of a finished tool call (`POST /v1/tool/post` bodies): the call plus its result and
 * error, both defaulting to empty.
 *
 * @example
 * ```ts
 * import { PostToolCallSchema } from "./tool_schema.ts";
 * const call = PostToolCallSchema.parse({ tool: "bash", result: "ok" });
 * console.assert(call.error === "" && call.result === "ok");
 * ```
 */
export const PostToolCallSchema: z.ZodObject<{
  tool: z.ZodString;
  args: z.ZodDefault<z.ZodUnknown>;
  platform: z.ZodDefault<z.ZodString>;
  user_id: z.ZodDefault<z.ZodString>;
  result: z.ZodDefault<z.ZodString>;
  error: z.ZodDefault<z.ZodString>;
}> = ToolCallSchema.extend({
  result: z.string().default(""),
  error: z.string().default(""),
});

/**
 * A tool call (input shape: every field but `tool` optional).
 *
 * @example
 * ```ts
 * import type { ToolCall } from "./tool_schema.ts";
 * const call: ToolCall = { tool: "bash", args: { command: "rm -rf /" }, user_id: "u1" };
 * console.assert(call.platform === undefined);
 * ```
 */
export type ToolCall = z.input<typeof ToolCallSchema>;
/**
 * A finished tool call (input shape).
 *
 * @example
 * ```ts
 * import type { PostToolCall } from "./tool_schema.ts";
 * const call: PostToolCall = { tool: "bash", args: { command: "ls" }, result: "a b c" };
 * console.assert(call.error === undefined);
 * ```
 */
export type PostToolCall = z.input<typeof PostToolCallSchema>;

/**
 * Zod schema of what a tool hook reads on stdin. `result` is sent to post hooks only; `error`
 * only when there is one.
 *
 * @example
 * ```ts
 * import { ToolHookRequestSchema } from "./tool_schema.ts";
 * const req = ToolHookRequestSchema.parse({
 *   hook: "pre_tool_call", tool: "bash", args: {}, platform: "", user_id: "",
 * });
 * console.assert(!("error" in req));
 * ```
 */
export const ToolHookRequestSchema: z.ZodObject<{
  hook: z.ZodEnum<{ pre_tool_call: "pre_tool_call"; post_tool_call: "post_tool_call" }>;
  tool: z.ZodString;
  args: z.ZodUnknown;
  result: z.ZodOptional<z.ZodString>;
  error: z.ZodOptional<z.ZodString>;
  platform: z.ZodString;
  user_id: z.ZodString;
}> = z.object({
  hook: z.enum(["pre_tool_call", "post_tool_call"]),
  tool: z.string(),
  args: z.unknown(),
  result: z.string().optional(),
  error: z.string().optional(),
  platform: z.string(),
  user_id: z.string(),
});

/**
 * The request a tool hook reads.
 *
 * @example
 * ```ts
 * import type { ToolHookRequest } from "./tool_schema.ts";
 * const request: ToolHookRequest = {
 *   hook: "post_tool_call",
 *   tool: "bash",
 *   args: { command: "ls" },
 *   result: "a b c",
 *   platform: "cli",
 *   user_id: "",
 * };
 * console.assert(request.error === undefined);
 * ```
 */
export type ToolHookRequest = z.output<typeof ToolHookRequestSchema>;

/**
 * Zod schema of a `pre_tool_call` answer: `{"action":"allow"|"block","reason"}`, extra keys
 * ignored. The action is trimmed and lower-cased first: an answer meaning "Block" must never pass
 * as a failure that the `allow` policy would let through.
 *
 * @example
 * ```ts
 * import { PreToolAnswerSchema } from "./tool_schema.ts";
 * const a = PreToolAnswerSchema.parse({ action: " Block ", reason: "rm -rf" });
 * console.assert(a.action === "block" && a.reason === "rm -rf");
 * ```
 */
export const PreToolAnswerSchema: z.ZodObject<{
  action: z.ZodPipe<
    z.ZodPipe<z.ZodString, z.ZodTransform<string, string>>,
    z.ZodEnum<{ allow: "allow"; block: "block" }>
  >;
  reason: z.ZodPipe<
    z.ZodOptional<z.ZodNullable<z.ZodString>>,
    z.ZodTransform<string, string | null | undefined>
  >;
}> = z.object({
  action: z.string().transform((a) => a.trim().toLowerCase()).pipe(z.enum(["allow", "block"])),
  reason: z.string().nullish().transform((r) => (r ?? "").trim()),
});

/**
 * A validated `pre_tool_call` answer.
 *
 * @example
 * ```ts
 * import { parsePreAnswer, type PreToolAnswer } from "./tool_schema.ts";
 * const parsed = parsePreAnswer('{"action":"ALLOW"}');
 * const answer: PreToolAnswer | null = parsed.ok ? parsed.answer : null;
 * console.assert(answer?.action === "allow" && answer.reason === "");
 * ```
 */
export type PreToolAnswer = z.output<typeof PreToolAnswerSchema>;

/**
 * Parses a pre hook's stdout (known not to be blank).
 *
 * @param stdout The hook's output.
 * @returns The answer, or why it is not one.
 * @example
 * ```ts
 * import { parsePreAnswer } from "./tool_schema.ts";
 * const bad = parsePreAnswer('{"action":"maybe"}');
 * console.assert(!bad.ok && bad.error.startsWith("unknown action"));
 * ```
 */
export function parsePreAnswer(
  stdout: string,
): { ok: true; answer: PreToolAnswer } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(stdout);
  } catch (error) {
    return { ok: false, error: `malformed JSON: ${(error as Error).message}` };
  }
  const result = PreToolAnswerSchema.safeParse(value);
  if (result.success) return { ok: true, answer: result.data };
  const issue = result.error.issues[0];
  const action = (value as { action?: unknown } | null)?.action;
  if (issue.path[0] === "action" && typeof action === "string") {
    return { ok: false, error: `unknown action "${action}": expected allow or block` };
  }
  if (issue.path[0] === "action" && action === undefined) {
    return { ok: false, error: 'missing "action": expected allow or block' };
  }
  const where = issue.path.length ? `"${issue.path.join(".")}"` : "answer";
  return { ok: false, error: `wrong type: ${where}: ${issue.message}` };
}
