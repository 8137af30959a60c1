import assert from "node:assert/strict";
import { join } from "node:path";
import type { PreToolOptions, ToolVerdict } from "../../lib/consult/tool_hooks.ts";
import { type PluginScripts, toolHooks, traceDir } from "../_index.ts";

const CALL = { tool: "bash", args: { command: "ls" }, platform: "cli", user_id: "u1" };

/** A pre_tool_call hook that prints `answer` (a JSON value) and ignores its request. */
function says(answer: unknown): Record<string, string> {
  return { pre_tool_call: `#!/bin/sh\ncat >/dev/null\n${print(answer)}\n` };
}

// printf, not echo: some shells' echo turns the JSON's "\n" into a newline.
function print(answer: unknown): string {
  return `printf '%s\\n' '${JSON.stringify(answer)}'`;
}

/** A pre_tool_call hook that prints `then` when its request contains `text`, else `otherwise`. */
function seeing(text: string, then: unknown, otherwise: unknown): Record<string, string> {
  return {
    pre_tool_call: `#!/bin/sh\ncase "$(cat)" in\n*'${text}'*) ${print(then)} ;;\n*) ${
      print(otherwise)
    } ;;\nesac\n`,
  };
}

/** Guards, and the verdict they reach on CALL when asked with each set of options in turn. */
const VERDICTS: {
  name: string;
  guards: PluginScripts;
  verdicts: [PreToolOptions, ToolVerdict][];
}[] = [
  {
    name:
      "an ask ranks over an allow: kept with canAsk, otherwise a block saying it needs approval",
    guards: {
      a: says({ action: "allow", reason: "fine" }),
      b: says({ action: " ASK ", reason: "a force push needs a person" }),
      c: says({ action: "allow" }),
    },
    verdicts: [
      [{ canAsk: true }, { action: "ask", reason: "a force push needs a person", by: "b" }],
      [{}, { action: "block", reason: "needs approval: a force push needs a person", by: "b" }],
    ],
  },
  {
    name: "a block ranks over an ask, even from a later guard",
    guards: {
      a: says({ action: "ask", reason: "maybe" }),
      b: says({ action: "block", reason: "never" }),
    },
    verdicts: [false, true].map((sequential) => [
      { canAsk: true, sequential },
      { action: "block", reason: "never", by: "b" },
    ]),
  },
  {
    name: "a rewrite asks the later guards again with the new args, and the verdict carries them",
    guards: {
      a: says({ action: "allow", args: { command: "ls -a" }, context: "a: added -a" }),
      b: seeing(
        '"ls -a"',
        { action: "allow", args: { command: "ls -a -l" }, context: "b: saw ls -a" },
        { action: "block", reason: "b judged the old args" },
      ),
      c: seeing(
        '"ls -a -l"',
        { action: "allow", context: "c: saw ls -a -l" },
        { action: "block", reason: "c judged old args" },
      ),
    },
    verdicts: [false, true].map((sequential) => [{ sequential }, {
      action: "allow",
      reason: "",
      args: { command: "ls -a -l" },
      context: "a: added -a\nb: saw ls -a\nc: saw ls -a -l",
    }]),
  },
  {
    name: "a later guard that blocks the rewritten args blocks the call",
    guards: {
      a: says({ action: "allow", args: { command: "rm -rf /" } }),
      b: seeing("rm -rf", { action: "block", reason: "no rm -rf" }, { action: "allow" }),
    },
    verdicts: [[{}, { action: "block", reason: "no rm -rf", by: "b" }]],
  },
  {
    name: "an ask with args keeps the rewritten args for the person to approve",
    guards: {
      a: says({ action: "ask", reason: "check it", args: { command: "ls -i" } }),
      b: seeing('"ls -i"', { action: "allow" }, { action: "block", reason: "old args" }),
    },
    verdicts: [
      [{ canAsk: true }, {
        action: "ask",
        reason: "check it",
        args: { command: "ls -i" },
        by: "a",
      }],
      // Where nobody can be asked, the block carries no args to run.
      [{}, { action: "block", reason: "needs approval: check it", by: "a" }],
    ],
  },
];

for (const { name, guards, verdicts } of VERDICTS) {
  Deno.test(name, async () => {
    const { hooks } = await toolHooks(guards);
    for (const [options, verdict] of verdicts) {
      assert.deepEqual(await hooks.preToolCall(CALL, options), verdict, JSON.stringify(options));
    }
  });
}

Deno.test("the contexts of every guard that answered are joined in decision order", async () => {
  const { hooks } = await toolHooks({
    a: says({ action: "allow", context: "from a" }),
    b: says({ action: "allow" }),
    c: says({ action: "ask", reason: "why", context: "from c\nsecond line" }),
  });
  assert.deepEqual(await hooks.preToolCall(CALL, { canAsk: true }), {
    action: "ask",
    reason: "why",
    context: "from a\nfrom c\nsecond line",
    by: "c",
  });
  const { hooks: blocking } = await toolHooks({
    a: says({ action: "allow", context: "from a" }),
    b: says({ action: "block", reason: "no", context: "from b" }),
  });
  assert.deepEqual(await blocking.preToolCall(CALL), {
    action: "block",
    reason: "no",
    context: "from a\nfrom b",
    by: "b",
  });
});

Deno.test("a migrated Claude Code hook's answers are read as allow, block and ask, with its input and context", async () => {
  const specific = (fields: Record<string, unknown>) => ({
    hookSpecificOutput: { hookEventName: "PreToolUse", ...fields },
  });
  const cases: [unknown, Record<string, unknown>][] = [
    [specific({ permissionDecision: "allow", permissionDecisionReason: "fine" }), {
      action: "allow",
      reason: "fine",
    }],
    [specific({ permissionDecision: "deny", permissionDecisionReason: "no" }), {
      action: "block",
      reason: "no",
      by: "claude",
    }],
    [specific({ permissionDecision: "ask", permissionDecisionReason: "you decide" }), {
      action: "ask",
      reason: "you decide",
      by: "claude",
    }],
    [specific({ updatedInput: { command: "ls -1" }, additionalContext: "one a line" }), {
      action: "allow",
      reason: "",
      args: { command: "ls -1" },
      context: "one a line",
    }],
    [{ decision: "approve", reason: "ok" }, { action: "allow", reason: "ok" }],
    [{ decision: "block", reason: "legacy no" }, {
      action: "block",
      reason: "legacy no",
      by: "claude",
    }],
    [{ continue: false, stopReason: "stop everything" }, {
      action: "block",
      reason: "stop everything",
      by: "claude",
    }],
  ];
  for (const [answer, verdict] of cases) {
    const { hooks } = await toolHooks({ claude: says(answer) });
    assert.deepEqual(
      await hooks.preToolCall(CALL, { canAsk: true }),
      verdict,
      JSON.stringify(answer),
    );
  }
});

Deno.test("agentEvent() sends agent.prompt hooks the prompt, cwd and agent, and joins their contexts", async () => {
  const trace = await traceDir();
  const agent = {
    name: "claude",
    event: "UserPromptSubmit",
    session_id: "s1",
    input: { prompt: "hi", hook_event_name: "UserPromptSubmit" },
  };
  const { hooks } = await toolHooks({
    a: {
      "agent.prompt":
        `#!/bin/sh\ncat > ${trace}/request\necho '{"action":"allow","context":"a"}'\n`,
    },
    b: { "agent.prompt": `#!/bin/sh\necho '{"context":"b","action":"allow","args":{"x":1}}'\n` },
    c: { "agent.prompt": "#!/bin/sh\nexit 0\n" },
    guard: { pre_tool_call: "#!/bin/sh\necho never >&2\nexit 2\n" },
  });
  const verdict = await hooks.agentEvent({ event: "agent.prompt", prompt: "hi", cwd: "/w", agent });
  assert.deepEqual(verdict, { action: "allow", reason: "", context: "a\nb" });
  const sent = JSON.parse(await Deno.readTextFile(join(trace, "request")));
  assert.deepEqual(sent, { id: sent.id, hook: "agent.prompt", prompt: "hi", cwd: "/w", agent });
});

Deno.test("agentEvent() blocks an agent.stop on exit 2 with stderr, and an ask there needs approval", async () => {
  const trace = await traceDir();
  const { hooks } = await toolHooks({
    a: {
      "agent.stop": `#!/bin/sh\ncat > ${trace}/request\necho ' tests still fail ' >&2\nexit 2\n`,
    },
  });
  assert.deepEqual(await hooks.agentEvent({ event: "agent.stop", cwd: "/w" }), {
    action: "block",
    reason: "tests still fail",
    by: "a",
  });
  const sent = JSON.parse(await Deno.readTextFile(join(trace, "request")));
  assert.deepEqual(sent, { id: sent.id, hook: "agent.stop", cwd: "/w" });
  const { hooks: asking } = await toolHooks({
    a: { "agent.stop": `#!/bin/sh\necho '{"action":"ask","reason":"really?"}'\n` },
  });
  assert.deepEqual(await asking.agentEvent({ event: "agent.stop" }, { canAsk: true }), {
    action: "block",
    reason: "needs approval: really?",
    by: "a",
  });
});

Deno.test("agentEvent() allows when no plugin hooks the event, and fails closed on a failing hook", async () => {
  const { hooks } = await toolHooks({ guard: says({ action: "block" }) });
  assert.deepEqual(await hooks.agentEvent({ event: "agent.prompt", prompt: "x" }), {
    action: "allow",
    reason: "",
  });
  const { hooks: failing } = await toolHooks({ a: { "agent.prompt": "#!/bin/sh\nexit 7\n" } });
  const verdict = await failing.agentEvent({ event: "agent.prompt", prompt: "x" });
  assert.equal(verdict.action, "block");
  assert.match(verdict.reason, /^agent\.prompt hook of plugin "a" failed: exited 7/i);
  const allowed = await failing.agentEvent({ event: "agent.prompt" }, { onFailure: "allow" });
  assert.equal(allowed.action, "allow");
});
