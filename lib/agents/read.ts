/**
 * Reading an agent's hook JSON: the bytes on stdin into a JSON object, and the object into the
 * plugin event it is (lib/agents/table.ts) and what that event's hooks are asked or told. Pure:
 * the command line reads stdin, the daemon a request body.
 *
 * @module
 */

import { type AgentSpec, pluginEvent } from "./table.ts";
import type { AgentEventCall, AgentInfo, PostToolCall } from "../consult/tool_hooks.ts";
import { AGENT_PROMPT, AGENT_STOP, eventSpec, POST_TOOL_CALL, PRE_TOOL_CALL } from "../events.ts";
import { InputError } from "../errors.ts";
import { quoted } from "../text.ts";
import { isRecord } from "../wire/json.ts";

/** What an agent's hook event asks of the plugins. */
export type AgentRequest =
  & {
    agent: AgentSpec;
    /** The event as the agent names it. */
    event: string;
    /** The plugin event it is. */
    pluginEvent: string;
    info: AgentInfo;
    /** The agent's working directory; may be empty. */
    cwd: string;
  }
  & (
    /** A tool call to judge (`pre_tool_call`) or a finished one to tell (`post_tool_call`). */
    | { type: "tool"; consulted: boolean; call: PostToolCall }
    /** A prompt or a stop to judge. */
    | { type: "judge"; consulted: true; call: AgentEventCall }
    /** Any other event, told to its hooks with the agent's `message`, if any. */
    | { type: "notify"; consulted: false; message: string }
  );

type Payload = Record<string, unknown>;

/** The tool call of an event whose payload does not have Claude Code's tool fields. */
interface ToolShape {
  tool(payload: Payload): string;
  args(payload: Payload): unknown;
  /** The field holding what the tool returned. */
  result?: string;
}

// Cursor's dedicated events name no tool: they become the tool a guard would match on
// preToolUse, so one `tools` matcher covers both.
const SHELL: ToolShape = {
  tool: () => "Shell",
  args: (p) => ({ command: requiredString(p, "command"), ...optionalField(p, "cwd") }),
  result: "output",
};
const MCP: ToolShape = {
  tool: (p) => requiredString(p, "tool_name"),
  args: (p) => parsedInput(p.tool_input),
  result: "result_json",
};

/** Per agent, its events whose tool call is not in `tool_name` and `tool_input`. */
const TOOL_SHAPES: Partial<Record<AgentSpec["name"], Record<string, ToolShape>>> = {
  cursor: {
    beforeShellExecution: SHELL,
    afterShellExecution: SHELL,
    beforeMCPExecution: MCP,
    afterMCPExecution: MCP,
    beforeReadFile: {
      tool: () => "Read",
      args: (p) => ({ file_path: requiredString(p, "file_path") }),
    },
    afterFileEdit: {
      tool: () => "Write",
      args: (p) => ({ file_path: requiredString(p, "file_path"), ...optionalField(p, "edits") }),
    },
  },
};

const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * The hook JSON an agent sent: UTF-8 (refused, never patched: a guard must judge the bytes the
 * tool would get) holding one JSON object. `where` names the input in messages (`stdin`).
 *
 * @throws {InputError} When it is not UTF-8, not JSON, or not an object.
 */
export function parseHookJson(bytes: Uint8Array, where: string): Payload {
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new InputError(`Invalid hook input on ${where}: not valid UTF-8`, { input: where });
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new InputError(`Malformed JSON on ${where}: ${(error as Error).message}`, {
      input: where,
    });
  }
  if (!isRecord(value)) {
    throw new InputError(`Invalid hook input on ${where}: expected a JSON object`, {
      input: where,
    });
  }
  return value as Payload;
}

/**
 * What `payload`, sent by `agent`, asks: its event from `hook_event_name` (else `defaultEvent`,
 * for callers that know it, as `tool pre --claude` does), mapped by the agent table.
 *
 * @throws {InputError} When the event is not named, or a tool event names no tool.
 */
export function readAgentRequest(
  agent: AgentSpec,
  payload: Payload,
  { defaultEvent }: { defaultEvent?: string } = {},
): AgentRequest {
  const named = payload.hook_event_name;
  if (named !== undefined && (typeof named !== "string" || named === "")) {
    throw new InputError(`Invalid ${agent.title} hook input: "hook_event_name" must be a name`, {
      input: "hook_event_name",
    });
  }
  const event = named ?? defaultEvent;
  if (event === undefined) {
    throw new InputError(`Invalid ${agent.title} hook input: no "hook_event_name"`, {
      input: "hook_event_name",
    });
  }
  const plugin = pluginEvent(agent, event);
  const sessionId = stringField(payload, "session_id") || stringField(payload, "conversation_id");
  const info: AgentInfo = { name: agent.name, event, session_id: sessionId, input: payload };
  const cwd = stringField(payload, "cwd") || firstRoot(payload);
  const base = { agent, event, pluginEvent: plugin, info, cwd };
  if (plugin === PRE_TOOL_CALL || plugin === POST_TOOL_CALL) {
    const pre = plugin === PRE_TOOL_CALL;
    const call = toolCall(TOOL_SHAPES[agent.name]?.[event], payload, { pre, agent: info });
    return {
      ...base,
      type: "tool",
      consulted: pre,
      call: { ...call, platform: agent.platform, cwd },
    };
  }
  if (plugin === AGENT_PROMPT || plugin === AGENT_STOP) {
    const call: AgentEventCall = { event: plugin, cwd, agent: info };
    if (plugin === AGENT_PROMPT) call.prompt = stringField(payload, "prompt");
    return { ...base, type: "judge", consulted: true, call };
  }
  if (eventSpec(plugin).kind === "consulted") {
    // A consulted event this command does not know how to ask: never let it pass unjudged.
    throw new InputError(`Cannot judge ${quoted(event)}: no reader for ${quoted(plugin)}`, {
      input: "hook_event_name",
    });
  }
  return { ...base, type: "notify", consulted: false, message: stringField(payload, "message") };
}

function toolCall(
  shape: ToolShape | undefined,
  payload: Payload,
  { pre, agent }: { pre: boolean; agent: AgentInfo },
): PostToolCall {
  const tool = shape ? shape.tool(payload) : requiredString(payload, "tool_name");
  const args = shape ? shape.args(payload) : parsedInput(payload.tool_input);
  const call: PostToolCall = {
    tool,
    args,
    platform: "",
    user_id: agent.session_id,
    agent,
  };
  if (pre) return call;
  const resultField = shape?.result ??
    (Object.hasOwn(payload, "tool_response") ? "tool_response" : "tool_output");
  call.result = asText(payload[resultField]);
  call.error = asText(payload.error) || asText(payload.error_message) ||
    asText(record(payload.tool_response)?.error);
  return call;
}

/** A tool's input: an object as it is; JSON text (Cursor's MCP events) parsed; none is `{}`. */
function parsedInput(value: unknown): unknown {
  if (value === undefined || value === null) return {};
  if (typeof value !== "string") return value;
  try {
    return JSON.parse(value);
  } catch {
    return value; // The guard judges what the agent sent.
  }
}

function requiredString(payload: Payload, field: string): string {
  const value = payload[field];
  if (typeof value !== "string" || value === "") {
    throw new InputError(`Invalid hook input: ${quoted(field)} must be a non-empty string`, {
      input: field,
    });
  }
  return value;
}

function optionalField(payload: Payload, field: string): Payload {
  return payload[field] === undefined ? {} : { [field]: payload[field] };
}

function stringField(payload: Payload, field: string): string {
  const value = payload[field];
  return typeof value === "string" ? value : "";
}

// Cursor names no cwd on most events: its hooks run from the workspace's first root.
function firstRoot(payload: Payload): string {
  const roots = payload.workspace_roots;
  return Array.isArray(roots) && typeof roots[0] === "string" ? roots[0] : "";
}

function record(value: unknown): Payload | undefined {
  return isRecord(value) ? value : undefined;
}

// A result or an error as hooks read it: text as it is, anything else as JSON text.
function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}
