import assert from "node:assert/strict";
import { parseAnswer } from "../../lib/wire/json.ts";
import { PreToolAnswerSchema } from "../../lib/consult/guards.ts";
import { ToolCallSchema } from "../../lib/consult/tool_hooks.ts";

function pre(stdout: string) {
  const read = parseAnswer(PreToolAnswerSchema, stdout);
  return read.ok ? read.answer : read.error;
}

Deno.test("a pre hook's action is read in any case and spacing, its reason trimmed or empty", () => {
  assert.deepEqual(pre('{"action":"allow"}'), { action: "allow", reason: "" });
  assert.deepEqual(pre('{"action":" Block ","reason":" rm -rf "}'), {
    action: "block",
    reason: "rm -rf",
  });
  assert.deepEqual(pre('{"action":"block","reason":null,"extra":1}'), {
    action: "block",
    reason: "",
  });
});

Deno.test("a pre hook's answer without a known action or with a wrong reason is refused, naming it", () => {
  assert.equal(
    pre('{"action":"maybe"}'),
    'wrong answer: "action": expected "allow" or "block", got "maybe"',
  );
  assert.equal(pre('{"reason":"no action"}'), 'wrong answer: "action": missing');
  assert.equal(pre('{"action":1}'), 'wrong answer: "action": expected "allow" or "block", got 1');
  assert.equal(
    pre('{"action":"block","reason":5}'),
    'wrong answer: "reason": expected a string, got 5',
  );
  assert.equal(pre("null"), "wrong answer: expected an object, got null");
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
