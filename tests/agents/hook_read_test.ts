import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT_FIXTURES } from "../_procs.ts";
import { AGENTS, agentSpec, pluginEvent } from "../../lib/agents/table.ts";
import { parseHookJson, readAgentRequest } from "../../lib/agents/hook.ts";
import { InputError } from "../../lib/errors.ts";
import { AGENT_PROMPT, AGENT_STOP, POST_TOOL_CALL, PRE_TOOL_CALL } from "../../lib/events.ts";

/** Every recorded payload of `agent`, by event name. */
function fixtures(agent: string): Map<string, Record<string, unknown>> {
  const found = new Map<string, Record<string, unknown>>();
  for (const entry of Deno.readDirSync(join(AGENT_FIXTURES, agent))) {
    if (!entry.isFile || !entry.name.endsWith(".json")) continue;
    const bytes = Deno.readFileSync(join(AGENT_FIXTURES, agent, entry.name));
    found.set(entry.name.slice(0, -5), parseHookJson(bytes, entry.name));
  }
  return found;
}

Deno.test("every recorded payload of every agent reads as the plugin event its table maps it to", () => {
  let count = 0;
  for (const agent of AGENTS) {
    for (const [event, payload] of fixtures(agent.name)) {
      const request = readAgentRequest(agent, payload);
      assert.equal(request.event, event);
      assert.equal(request.pluginEvent, pluginEvent(agent, event), `${agent.name} ${event}`);
      assert.deepEqual(request.info.input, payload);
      assert.equal(request.info.name, agent.name);
      assert.ok(request.info.session_id !== "", `${agent.name} ${event}: a session`);
      assert.ok(request.cwd.startsWith("/"), `${agent.name} ${event}: a cwd`);
      const kind = request.pluginEvent === PRE_TOOL_CALL ||
          request.pluginEvent === AGENT_PROMPT || request.pluginEvent === AGENT_STOP
        ? "consulted"
        : "notified";
      assert.equal(request.consulted, kind === "consulted", `${agent.name} ${event}`);
      if (request.type === "tool") {
        assert.ok(request.call.tool !== "", `${agent.name} ${event}: a tool`);
        assert.equal(request.call.platform, agent.platform);
        assert.equal(request.call.cwd, request.cwd);
      }
      count++;
    }
  }
  assert.ok(count >= 40, `${count} fixtures`);
});

Deno.test("a tool call is the agent's own tool name and input, with its result and error after", () => {
  const claude = agentSpec("claude")!;
  const pre = readAgentRequest(claude, fixtures("claude").get("PreToolUse")!);
  assert.equal(pre.type, "tool");
  if (pre.type !== "tool") return;
  assert.equal(pre.call.tool, "Bash");
  assert.deepEqual(pre.call.args, { command: "touch ran.txt", description: "Run it" });
  assert.equal(pre.call.user_id, "daedbf1d-1463-416e-8ac6-29349cfd5eaf");
  assert.equal(pre.call.cwd, "/home/user/proj");
  assert.equal(pre.call.result, undefined);
  const failed = readAgentRequest(claude, fixtures("claude").get("PostToolUseFailure")!);
  assert.ok(failed.type === "tool" && !failed.consulted);
  assert.equal(failed.call.error, "Exit code 1\nto-stdout\nto-stderr");
  const gemini = readAgentRequest(agentSpec("gemini")!, fixtures("gemini").get("BeforeTool")!);
  assert.ok(gemini.type === "tool");
  assert.equal(gemini.call.tool, "run_shell_command");
  assert.equal(gemini.call.platform, "gemini-cli");
  const after = readAgentRequest(agentSpec("gemini")!, {
    ...fixtures("gemini").get("AfterTool")!,
    tool_response: { llmContent: "", error: "Exit Code: 1" },
  });
  assert.ok(after.type === "tool");
  assert.equal(after.call.error, "Exit Code: 1");
  assert.deepEqual(JSON.parse(after.call.result!), { llmContent: "", error: "Exit Code: 1" });
  const codex = readAgentRequest(agentSpec("codex")!, fixtures("codex").get("PostToolUse")!);
  assert.ok(codex.type === "tool");
  assert.equal(codex.call.result, "");
  assert.equal(codex.call.error, "");
});

Deno.test("Cursor's shell, MCP, read and edit events are the tools Shell, the MCP tool, Read and Write", () => {
  const cursor = agentSpec("cursor")!;
  const all = fixtures("cursor");
  const tool = (event: string) => {
    const request = readAgentRequest(cursor, all.get(event)!);
    assert.ok(request.type === "tool", event);
    return request.call;
  };
  assert.deepEqual(
    [tool("beforeShellExecution").tool, tool("beforeShellExecution").args],
    ["Shell", { command: "npm install express", cwd: "/project" }],
  );
  assert.deepEqual(
    [tool("beforeMCPExecution").tool, tool("beforeMCPExecution").args],
    ["database_query", { query: "SELECT 1" }],
  );
  assert.deepEqual([tool("beforeReadFile").tool, tool("beforeReadFile").args], ["Read", {
    file_path: "/project/.env",
  }]);
  assert.equal(tool("afterFileEdit").tool, "Write");
  assert.equal(tool("afterShellExecution").result, "added 64 packages");
  assert.equal(tool("afterMCPExecution").result, '{"rows":[[1]]}');
  assert.equal(tool("postToolUse").result, '{"exitCode":0,"stdout":"All tests passed"}');
  assert.equal(tool("postToolUseFailure").error, "Command timed out after 30s");
  assert.equal(tool("preToolUse").tool, "Shell");
  // Cursor names its conversation, and most events no cwd: the first workspace root.
  const prompt = readAgentRequest(cursor, all.get("beforeSubmitPrompt")!);
  assert.ok(prompt.type === "judge");
  assert.equal(prompt.call.prompt, "Fix the bug in main.ts");
  assert.equal(prompt.cwd, "/project");
  assert.equal(prompt.info.session_id, "conv-123");
});

Deno.test("prompts and stops are judged, other events are told with the agent's message", () => {
  const claude = agentSpec("claude")!;
  const prompt = readAgentRequest(claude, fixtures("claude").get("UserPromptSubmit")!);
  assert.ok(prompt.type === "judge" && prompt.consulted);
  assert.equal(prompt.call.event, AGENT_PROMPT);
  assert.equal(typeof prompt.call.prompt, "string");
  const stop = readAgentRequest(claude, fixtures("claude").get("SubagentStop")!);
  assert.ok(stop.type === "judge");
  assert.equal(stop.call.event, AGENT_STOP);
  assert.equal(stop.call.prompt, undefined);
  const note = readAgentRequest(claude, {
    hook_event_name: "Notification",
    session_id: "s",
    message: "Claude needs your permission",
  });
  assert.ok(note.type === "notify" && !note.consulted);
  assert.equal(note.pluginEvent, "agent.notification");
  assert.equal(note.message, "Claude needs your permission");
  const unknown = readAgentRequest(claude, { hook_event_name: "PostToolBatch" });
  assert.equal(unknown.pluginEvent, "agent.post_tool_batch");
  assert.equal(unknown.consulted, false);
  const post = readAgentRequest(claude, { tool_name: "Bash" }, { defaultEvent: "PostToolUse" });
  assert.equal(post.pluginEvent, POST_TOOL_CALL);
});

Deno.test("hook input that is not UTF-8, not JSON, not an object, or names no event or tool is refused", () => {
  const claude = agentSpec("claude")!;
  const bytes = (text: string) => new TextEncoder().encode(text);
  assert.throws(
    () => parseHookJson(new Uint8Array([0x7b, 0xff, 0x7d]), "stdin"),
    /not valid UTF-8/,
  );
  assert.throws(() => parseHookJson(bytes("{"), "stdin"), /Malformed JSON on stdin/);
  for (const text of ["[1]", "null", "7", '"x"']) {
    assert.throws(() => parseHookJson(bytes(text), "stdin"), /expected a JSON object/, text);
  }
  assert.throws(() => readAgentRequest(claude, {}), /no "hook_event_name"/);
  assert.throws(() => readAgentRequest(claude, { hook_event_name: 7 }), InputError);
  assert.throws(
    () => readAgentRequest(claude, { hook_event_name: "PreToolUse", tool_input: {} }),
    /"tool_name" must be a non-empty string/,
  );
  assert.throws(
    () => readAgentRequest(agentSpec("cursor")!, { hook_event_name: "beforeShellExecution" }),
    /"command"/,
  );
});
