import assert from "node:assert/strict";
import { AGENTS, agentSpec, judgedByOthers, pluginEvent } from "../../lib/agents/table.ts";
import { eventSpec, isKnownEvent } from "../../lib/events.ts";

Deno.test("every agent event the table maps is an event of the event table", () => {
  for (const agent of AGENTS) {
    for (const [name, event] of Object.entries(agent.events)) {
      assert.ok(isKnownEvent(event), `${agent.name} ${name} -> ${event}`);
    }
  }
});

Deno.test("an agent event the table does not map is the notified agent.<snake_case> event", () => {
  const claude = agentSpec("claude")!;
  assert.equal(pluginEvent(claude, "PreToolUse"), "pre_tool_call");
  assert.equal(pluginEvent(claude, "SubagentStart"), "agent.subagent_start");
  assert.equal(pluginEvent(claude, "PermissionRequest"), "agent.permission_request");
  assert.equal(pluginEvent(agentSpec("cursor")!, "afterMCPExecution"), "post_tool_call");
  assert.equal(
    pluginEvent(agentSpec("cursor")!, "afterAgentResponse"),
    "agent.after_agent_response",
  );
  assert.equal(eventSpec(pluginEvent(claude, "SubagentStart")).kind, "notified");
  assert.equal(agentSpec("toString"), undefined);
});

Deno.test("judgedByOthers names the agents whose tool call or prompt a miswired hook was sent", () => {
  const names = (agent: string, event: string) =>
    judgedByOthers(agentSpec(agent)!, event).map((other) => other.name);
  assert.deepEqual(names("gemini", "PreToolUse"), ["claude", "codex"]);
  assert.deepEqual(names("cursor", "UserPromptSubmit"), ["claude", "codex"]);
  assert.deepEqual(names("claude", "BeforeTool"), ["gemini"]);
  // Its own events, notified ones and stops (a block there means "keep working") are not.
  assert.deepEqual(names("claude", "PreToolUse"), []);
  assert.deepEqual(names("cursor", "SessionStart"), []);
  assert.deepEqual(names("gemini", "Stop"), []);
});
