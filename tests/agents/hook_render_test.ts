import assert from "node:assert/strict";
import { agentSpec } from "../../lib/agents/table.ts";
import { type AgentRequest, readAgentRequest } from "../../lib/agents/hook.ts";
import {
  commandAnswer,
  httpAnswer,
  MAX_TOLD_CHARS,
  NEEDS_APPROVAL,
} from "../../lib/agents/hook.ts";
import type { ToolVerdict } from "../../lib/consult/tool_hooks.ts";

function request(agent: string, event: string, fields: Record<string, unknown> = {}): AgentRequest {
  const payload = {
    hook_event_name: event,
    session_id: "s1",
    cwd: "/p",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    command: "ls",
    prompt: "hi",
    ...fields,
  };
  return readAgentRequest(agentSpec(agent)!, payload);
}

const PRE: Record<string, string> = {
  claude: "PreToolUse",
  codex: "PreToolUse",
  gemini: "BeforeTool",
  cursor: "preToolUse",
};
const PROMPT: Record<string, string> = {
  claude: "UserPromptSubmit",
  codex: "UserPromptSubmit",
  gemini: "BeforeAgent",
  cursor: "beforeSubmitPrompt",
};
const STOP: Record<string, string> = {
  claude: "Stop",
  codex: "Stop",
  gemini: "AfterAgent",
  cursor: "stop",
};
const AGENT_NAMES = Object.keys(PRE);

const allow: ToolVerdict = { action: "allow", reason: "" };
const block: ToolVerdict = { action: "block", reason: "no rm, please" };

function json(text: string): unknown {
  return JSON.parse(text);
}

Deno.test("an allow is silence for every agent and event: exit 0, nothing printed, {} over HTTP", () => {
  for (const agent of AGENT_NAMES) {
    for (const event of [PRE[agent], PROMPT[agent], STOP[agent]]) {
      const r = request(agent, event);
      assert.deepEqual(commandAnswer(r, allow).answer, { exitCode: 0, stdout: "", stderr: "" });
      assert.deepEqual(httpAnswer(r, allow).answer, {});
    }
  }
});

Deno.test("a block of a tool call is exit 2 with the reason alone on stderr, and the agent's deny over HTTP", () => {
  for (const agent of AGENT_NAMES) {
    const r = request(agent, PRE[agent]);
    assert.deepEqual(commandAnswer(r, block).answer, {
      exitCode: 2,
      stdout: "",
      stderr: "no rm, please\n",
    });
  }
  assert.deepEqual(httpAnswer(request("claude", "PreToolUse"), block).answer, {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "no rm, please",
    },
  });
  assert.deepEqual(httpAnswer(request("gemini", "BeforeTool"), block).answer, {
    decision: "deny",
    reason: "no rm, please",
  });
  assert.deepEqual(httpAnswer(request("codex", "PreToolUse"), block).answer, {
    decision: "block",
    reason: "no rm, please",
  });
  assert.deepEqual(httpAnswer(request("cursor", "beforeShellExecution"), block).answer, {
    permission: "deny",
    user_message: "no rm, please",
    agent_message: "no rm, please",
  });
});

Deno.test("a block's reason is never empty nor JSON, which Codex and Gemini CLI would not read as a block", () => {
  const r = request("gemini", "BeforeTool");
  const empty = commandAnswer(r, { action: "block", reason: " ", by: "guard" }).answer;
  assert.equal(empty.stderr, 'Blocked by "guard"\n');
  const bare = commandAnswer(r, { action: "block", reason: "" }).answer;
  assert.equal(bare.stderr, "Blocked by a tyhooks guard\n");
  const jsonReason = commandAnswer(r, { action: "block", reason: '{"decision":"allow"}' }).answer;
  assert.equal(jsonReason.stderr, 'Blocked: {"decision":"allow"}\n');
});

Deno.test("a blocked prompt or stop is exit 2 and stderr, except Cursor's, which reads JSON", () => {
  for (const agent of ["claude", "codex", "gemini"]) {
    for (const event of [PROMPT[agent], STOP[agent]]) {
      assert.deepEqual(commandAnswer(request(agent, event), block).answer, {
        exitCode: 2,
        stdout: "",
        stderr: "no rm, please\n",
      });
    }
  }
  const prompt = commandAnswer(request("cursor", "beforeSubmitPrompt"), block).answer;
  assert.equal(prompt.exitCode, 0);
  assert.deepEqual(json(prompt.stdout), { continue: false, user_message: "no rm, please" });
  const stop = commandAnswer(request("cursor", "stop"), block).answer;
  assert.deepEqual(json(stop.stdout), { followup_message: "no rm, please" });
  assert.deepEqual(httpAnswer(request("claude", "Stop"), block).answer, {
    decision: "block",
    reason: "no rm, please",
  });
});

Deno.test("an ask reaches Claude Code and Cursor's shell event; the others block, needing approval", () => {
  const ask: ToolVerdict = { action: "ask", reason: "force push?" };
  const claude = commandAnswer(request("claude", "PreToolUse"), ask).answer;
  assert.equal(claude.exitCode, 0);
  assert.deepEqual(json(claude.stdout), {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: "force push?",
    },
  });
  const shell = commandAnswer(request("cursor", "beforeShellExecution"), ask).answer;
  assert.deepEqual(json(shell.stdout), {
    permission: "ask",
    user_message: "force push?",
    agent_message: "force push?",
  });
  for (
    const [agent, event] of [
      ["gemini", "BeforeTool"],
      ["codex", "PreToolUse"],
      ["cursor", "preToolUse"],
      ["cursor", "beforeMCPExecution"],
      ["cursor", "beforeReadFile"],
    ]
  ) {
    const fields = { tool_input: "{}", file_path: "/f" };
    assert.deepEqual(commandAnswer(request(agent, event, fields), ask).answer, {
      exitCode: 2,
      stdout: "",
      stderr: `${NEEDS_APPROVAL}force push?\n`,
    }, `${agent} ${event}`);
  }
});

Deno.test("rewritten args go in each agent's own field, Codex's with the approval it requires", () => {
  const args = { command: "ls -la" };
  const rewrite: ToolVerdict = { action: "allow", reason: "", args, context: "listed long" };
  assert.deepEqual(json(commandAnswer(request("claude", "PreToolUse"), rewrite).answer.stdout), {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      updatedInput: args,
      additionalContext: "listed long",
    },
  });
  assert.deepEqual(json(commandAnswer(request("codex", "PreToolUse"), rewrite).answer.stdout), {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "allow",
      updatedInput: args,
      additionalContext: "listed long",
    },
  });
  const gemini = commandAnswer(request("gemini", "BeforeTool"), rewrite);
  assert.deepEqual(json(gemini.answer.stdout), { hookSpecificOutput: { tool_input: args } });
  assert.match(gemini.dropped!, /Gemini CLI takes no context on "BeforeTool"/);
  assert.deepEqual(json(commandAnswer(request("cursor", "preToolUse"), rewrite).answer.stdout), {
    permission: "allow",
    updated_input: args,
  });
});

Deno.test("a rewrite an agent would not apply as written blocks, naming why", () => {
  // Gemini CLI merges the new args over the model's: a dropped key would stay.
  const dropping: ToolVerdict = { action: "allow", reason: "", args: { cmd: "ls" } };
  const gemini = commandAnswer(request("gemini", "BeforeTool"), dropping).answer;
  assert.equal(gemini.exitCode, 2);
  assert.match(gemini.stderr, /Gemini CLI cannot drop the argument "command"/);
  const shell = commandAnswer(request("cursor", "beforeShellExecution"), {
    action: "allow",
    reason: "safer",
    args: { command: "ls" },
  }).answer;
  assert.equal(shell.exitCode, 2);
  assert.equal(
    shell.stderr,
    'Cursor cannot take a rewritten tool call on "beforeShellExecution": safer\n',
  );
});

Deno.test("context reaches the agents that take it and is dropped, with a note, elsewhere", () => {
  const told: ToolVerdict = { action: "allow", reason: "", context: "mind the tests" };
  for (
    const [agent, event] of [["claude", "PreToolUse"], ["codex", "UserPromptSubmit"], [
      "gemini",
      "BeforeAgent",
    ]]
  ) {
    const r = commandAnswer(request(agent, event), told);
    assert.deepEqual(json(r.answer.stdout), {
      hookSpecificOutput: { hookEventName: event, additionalContext: "mind the tests" },
    });
    assert.equal(r.dropped, undefined);
  }
  for (
    const [agent, event] of [["gemini", "BeforeTool"], ["cursor", "preToolUse"], [
      "claude",
      "Stop",
    ]]
  ) {
    const r = commandAnswer(request(agent, event), told);
    assert.deepEqual(r.answer, { exitCode: 0, stdout: "", stderr: "" }, `${agent} ${event}`);
    assert.match(r.dropped!, /takes no context/);
  }
});

Deno.test("a guard's reason reaches the agent with its lines, no other control character, and bounded", () => {
  const reason = "rm: \x1b[31mno\x1b[0m\r\nsee\tthe policy\x07\u009b2J";
  const { answer } = commandAnswer(request("claude", "PreToolUse"), { action: "block", reason });
  assert.equal(answer.stderr, "rm: \\x1b[31mno\\x1b[0m\nsee\tthe policy\\x07\\x9b2J\n");
  const context = "a\x1bb";
  const asked = commandAnswer(request("claude", "PreToolUse"), {
    action: "ask",
    reason: "?\x00",
    context,
  });
  assert.deepEqual(json(asked.answer.stdout), {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "ask",
      permissionDecisionReason: "?\\x00",
      additionalContext: "a\\x1bb",
    },
  });
  const long = commandAnswer(request("gemini", "BeforeTool"), {
    action: "block",
    reason: "x".repeat(MAX_TOLD_CHARS + 10),
  });
  assert.equal(long.answer.stderr, `${"x".repeat(MAX_TOLD_CHARS)}... (10 characters cut)\n`);
  // The cut never splits an escape or a surrogate pair.
  const cut = (reason: string) =>
    commandAnswer(request("claude", "PreToolUse"), { action: "block", reason }).answer.stderr;
  const before = "x".repeat(MAX_TOLD_CHARS - 2);
  assert.equal(cut(`${before}\x1byyyy`), `${before}... (8 characters cut)\n`);
  assert.equal(cut(`${before}x\u{1f600}z`), `${before}x... (3 characters cut)\n`);
});
