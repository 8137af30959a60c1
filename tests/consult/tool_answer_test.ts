import assert from "node:assert/strict";
import { parseAnswer } from "../../lib/wire/json.ts";
import { PreToolAnswerSchema } from "../../lib/consult/guards.ts";
import { ToolCallSchema } from "../../lib/consult/tool_hooks.ts";

function pre(stdout: string) {
  const read = parseAnswer(PreToolAnswerSchema, stdout);
  return read.ok ? read.answer : read.error;
}

/** Asserts what {@linkcode pre} makes of each stdout: the answer, or the refusal's words. */
function assertRead(cases: [stdout: string, read: unknown][]): void {
  for (const [stdout, read] of cases) assert.deepEqual(pre(stdout), read, stdout);
}

Deno.test("a pre hook's action is read in any case and spacing, its reason trimmed or empty", () => {
  assertRead([
    ['{"action":"allow"}', { action: "allow", reason: "" }],
    ['{"action":" Block ","reason":" rm -rf "}', { action: "block", reason: "rm -rf" }],
    ['{"action":"block","reason":null,"extra":1}', { action: "block", reason: "" }],
  ]);
});

Deno.test("a pre hook's keys are matched as Go's encoding/json matches them, the last of one key counting", () => {
  assertRead([
    ['{"Action":"block","Reason":"no"}', { action: "block", reason: "no" }],
    ['{"action":"allow","ACTION":"block"}', { action: "block", reason: "" }],
    ['{"ACTION":"block","action":"allow"}', { action: "allow", reason: "" }],
    // A null reads as left out, as Go reads it: this is Claude Code's answer, a deny.
    ['{"Action":null,"hookSpecificOutput":{"permissionDecision":"deny"}}', {
      action: "block",
      reason: "",
    }],
    ['{"Action":"ask","Args":{"a":1},"Context":"c"}', {
      action: "ask",
      reason: "",
      args: { a: 1 },
      context: "c",
    }],
  ]);
});

Deno.test("a pre hook's answer without a known action or with a wrong reason is refused, naming it", () => {
  assertRead([
    [
      '{"action":"maybe"}',
      'wrong answer: "action": expected "allow", "block" or "ask", got "maybe"',
    ],
    ['{"reason":"no action"}', 'wrong answer: "action": missing'],
    ['{"action":1}', 'wrong answer: "action": expected "allow", "block" or "ask", got 1'],
    ['{"action":"block","reason":5}', 'wrong answer: "reason": expected a string, got 5'],
    ["null", 'wrong answer: "action": missing'],
  ]);
});

Deno.test("ToolCallSchema fills in a call's defaults and refuses an empty or missing tool", () => {
  assert.deepEqual(ToolCallSchema.parse({ tool: "bash", extra: 1 }), {
    tool: "bash",
    args: {},
    platform: "",
    user_id: "",
  });
  assert.deepEqual(ToolCallSchema.parse({ tool: "bash", args: [1, "two"], platform: "cli" }), {
    tool: "bash",
    args: [1, "two"],
    platform: "cli",
    user_id: "",
  });
  for (
    const [body, message] of [
      [{}, '"tool": missing'],
      [{ tool: "" }, '"tool": expected a non-empty string, got ""'],
      [{ tool: "bash", platform: null }, '"platform": expected a string, got null'],
    ] as const
  ) {
    assert.throws(() => ToolCallSchema.parse(body), { name: "SchemaError", message });
  }
});

Deno.test("a guard's ask, args and context are read, a null one as left out", () => {
  assertRead([
    [
      '{"action":"ask","reason":"why","args":{"command":"ls -i"},"context":"note","id":"3"}',
      { action: "ask", reason: "why", args: { command: "ls -i" }, context: "note" },
    ],
    ['{"action":"allow","args":null,"context":null}', { action: "allow", reason: "" }],
    ['{"action":"allow","args":"ls -i"}', 'wrong answer: "args": expected an object, got "ls -i"'],
    [
      '{"action":"allow","context":[1]}',
      'wrong answer: "context": expected a string, got an array of 1',
    ],
  ]);
});

Deno.test("a Claude Code hook's answer and the legacy decision are read as the same answers", () => {
  assertRead([
    [
      JSON.stringify({
        hookSpecificOutput: {
          hookEventName: "PreToolUse",
          permissionDecision: "Deny",
          permissionDecisionReason: " no ",
          updatedInput: { a: 1 },
          additionalContext: "ctx",
        },
      }),
      { action: "block", reason: "no", args: { a: 1 }, context: "ctx" },
    ],
    ['{"hookSpecificOutput":{"permissionDecision":"allow"}}', { action: "allow", reason: "" }],
    ['{"hookSpecificOutput":{"permissionDecision":"ask"}}', { action: "ask", reason: "" }],
    // No decision in hookSpecificOutput: the legacy decision beside it says, else no objection.
    [
      '{"decision":"block","reason":"r","hookSpecificOutput":{"additionalContext":"c"}}',
      { action: "block", reason: "r", context: "c" },
    ],
    [
      '{"hookSpecificOutput":{"additionalContext":"c"}}',
      { action: "allow", reason: "", context: "c" },
    ],
    ['{"decision":"approve"}', { action: "allow", reason: "" }],
    [
      '{"continue":false,"stopReason":"halt","decision":"approve"}',
      { action: "block", reason: "halt" },
    ],
    [
      '{"hookSpecificOutput":{"permissionDecision":"maybe"}}',
      'wrong answer: "hookSpecificOutput.permissionDecision": expected "allow", "deny" or "ask", got "maybe"',
    ],
    [
      '{"decision":"allow"}',
      'wrong answer: "decision": expected "block" or "approve", got "allow"',
    ],
  ]);
});
