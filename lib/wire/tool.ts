/**
 * The tool-call wire formats: the call a host asks about, the request a hook reads on stdin, and
 * a `pre_tool_call` hook's answer. Loaded lazily: zod is only paid for when a hook answers.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "./schema.ts";
import { parseAnswer } from "./json.ts";
import { POST_TOOL_CALL, PRE_TOOL_CALL } from "../events.ts";

/**
 * Zod schema of a tool call as a host describes it (`POST /v1/tool/pre` bodies, the `tool pre`
 * flags). `args` is any JSON value; the rest default to empty.
 */
export const ToolCallSchema = z.object({
  tool: z.string().min(1),
  args: z.unknown().default({}),
  platform: z.string().default(""),
  user_id: z.string().default(""),
});

/**
 * Zod schema of a finished tool call (`POST /v1/tool/post` bodies): the call plus its result and
 * error, both defaulting to empty.
 */
export const PostToolCallSchema = ToolCallSchema.extend({
  result: z.string().default(""),
  error: z.string().default(""),
});

/**
 * A tool call as a host describes it: every field but `tool` may be left out (`ToolCallSchema`
 * fills in the defaults).
 */
export interface ToolCall {
  /** The tool's name, e.g. `bash`; not empty. */
  tool: string;
  /** Its arguments, any JSON value; default `{}`. */
  args?: unknown;
  /** Where the call comes from, e.g. `cli`; default `""`. */
  platform?: string;
  /** Who made it; default `""`. */
  user_id?: string;
}
/**
 * A finished tool call: the call, its result and its error (`PostToolCallSchema` fills in the
 * defaults).
 */
export interface PostToolCall extends ToolCall {
  /** What the tool returned; default `""`. */
  result?: string;
  /** Why it failed; default `""`, no error. */
  error?: string;
}

/**
 * Zod schema of what a tool hook reads on stdin. `result` is sent to post hooks only; `error`
 * only when there is one.
 */
export const ToolHookRequestSchema = z.object({
  hook: z.enum([PRE_TOOL_CALL, POST_TOOL_CALL]),
  tool: z.string(),
  args: z.unknown(),
  result: z.string().optional(),
  error: z.string().optional(),
  platform: z.string(),
  user_id: z.string(),
});

/** The request a tool hook reads on stdin. */
export interface ToolHookRequest {
  /** Which hook is asked: `pre_tool_call` may block the call, `post_tool_call` is told of it. */
  hook: "pre_tool_call" | "post_tool_call";
  /** The tool's name. */
  tool: string;
  /** Its arguments, any JSON value. */
  args: unknown;
  /** What the tool returned: sent to post hooks only. */
  result?: string;
  /** Why the tool failed: sent to post hooks only, and only when it did. */
  error?: string;
  /** Where the call comes from; may be empty. */
  platform: string;
  /** Who made it; may be empty. */
  user_id: string;
}

/**
 * Zod schema of a `pre_tool_call` answer: `{"action":"allow"|"block","reason"}`, extra keys
 * ignored. The action is trimmed and lower-cased first: an answer meaning "Block" must never pass
 * as a failure that the `allow` policy would let through.
 */
export const PreToolAnswerSchema = z.object({
  action: z.string().transform((a) => a.trim().toLowerCase()).pipe(z.enum(["allow", "block"])),
  reason: z.string().nullish().transform((r) => (r ?? "").trim()),
});

// The schemas validate, the interfaces document: neither may gain a field the other lacks. A
// tool call is checked as callers write it (input) and as the schema returns it (defaults filled).
true satisfies Same<z.input<typeof ToolCallSchema>, ToolCall>;
true satisfies Same<z.output<typeof ToolCallSchema>, Required<ToolCall>>;
true satisfies Same<z.input<typeof PostToolCallSchema>, PostToolCall>;
true satisfies Same<z.output<typeof PostToolCallSchema>, Required<PostToolCall>>;
true satisfies Same<z.output<typeof ToolHookRequestSchema>, ToolHookRequest>;
true satisfies Same<z.output<typeof PreToolAnswerSchema>, PreToolAnswer>;

/** A `pre_tool_call` hook's answer, validated. */
export interface PreToolAnswer {
  /** The verdict, trimmed and lower-cased from what the hook printed. */
  action: "allow" | "block";
  /** Why, trimmed; `""` when the hook gave no reason. */
  reason: string;
}

/** Parses a pre hook's stdout (known not to be blank): the answer, or why it is not one. */
export function parsePreAnswer(
  stdout: string,
): { ok: true; answer: PreToolAnswer } | { ok: false; error: string } {
  return parseAnswer(PreToolAnswerSchema, stdout, (issue, value) => {
    if (issue.path[0] !== "action") return undefined;
    const action = (value as { action?: unknown } | null)?.action;
    if (typeof action === "string") return `unknown action "${action}": expected allow or block`;
    if (action === undefined) return 'missing "action": expected allow or block';
    return undefined;
  });
}
