/**
 * One hook call of a coding agent, from its JSON to its answer: the plugin event it is (table.ts),
 * the plugins' decision (`tyhooks agent` and the daemon's `POST /v1/agent/{agent}` both decide
 * here, so it is the same either way), and the answer in the agent's own contract. Allow is
 * silence, never an approval; a block is exit 2 with the reason on stderr, which every agent
 * reads; what an agent cannot be told is dropped (context) or blocks, naming why (an ask or a
 * rewrite it would ignore and run the call). Reading and answering are pure.
 *
 * @module
 */

import { type AgentName, type AgentSpec, judgedByOthers, pluginEvent } from "./table.ts";
import type { ConsultOptions } from "../consult/consult.ts";
import type {
  AgentEventCall,
  AgentInfo,
  FailurePolicy,
  PostToolCall,
  ToolRunner,
  ToolVerdict,
} from "../consult/tool_hooks.ts";
import type { Runner } from "../hooks/runner.ts";
import { AGENT_PROMPT, AGENT_STOP, eventSpec, POST_TOOL_CALL, PRE_TOOL_CALL } from "../events.ts";
import { InputError } from "../errors.ts";
import { escapeControlKeepingLines, jsonText, quoted } from "../text.ts";
import { decodeJson, isRecord } from "../wire/json.ts";

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

/**
 * The hook JSON an agent sent, one object; bytes that are not UTF-8 are refused, never patched:
 * a guard must judge the bytes the tool would get. `where` names the input in messages.
 */
export function parseHookJson(bytes: Uint8Array, where: string): Payload {
  const read = decodeJson(bytes, { object: true });
  if (read.ok) return read.value as Payload;
  const message = read.step === "json"
    ? `Malformed JSON on ${where}: ${read.error}`
    : `Invalid hook input on ${where}: ${read.error}`;
  throw new InputError(message, { input: where });
}

/** The event of a hook JSON, as the agent names it and as the plugins hear it. */
export interface AgentEvent {
  event: string;
  pluginEvent: string;
  consulted: boolean;
}

/**
 * The event `payload` names in `hook_event_name` (else `defaultEvent`), as the agent table maps
 * it; an error when it names none, or names another agent's event to judge.
 */
export function agentEvent(
  agent: AgentSpec,
  payload: Payload,
  { defaultEvent }: { defaultEvent?: string } = {},
): AgentEvent {
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
  const others = judgedByOthers(agent, event);
  if (others.length > 0) {
    const titles = others.map((other) => other.title).join(" and ");
    throw new InputError(
      `${quoted(event)} is an event of ${titles}, not of ${agent.title}: ` +
        `is this hook meant to run "tyhooks agent ${others[0].name}"?`,
      { input: "hook_event_name" },
    );
  }
  const plugin = pluginEvent(agent, event);
  return { event, pluginEvent: plugin, consulted: eventSpec(plugin).kind === "consulted" };
}

/**
 * What `payload` asks: its event ({@linkcode agentEvent}, or `named` when the caller read it
 * already) and what the plugins are told of it.
 */
export function readAgentRequest(
  agent: AgentSpec,
  payload: Payload,
  options: { defaultEvent?: string; named?: AgentEvent } = {},
): AgentRequest {
  const { event, pluginEvent: plugin } = options.named ?? agentEvent(agent, payload, options);
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
    asText(isRecord(payload.tool_response) ? payload.tool_response.error : undefined);
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

// A result or an error as hooks read it: text as it is, anything else as JSON text.
function asText(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value);
}

// The plugins' decision.

/** Options of {@linkcode decideAgentEvent}. */
export interface DecideAgentOptions {
  /** `--pre-hook` scripts, asked with the plugins' guards. */
  preHooks?: string[];
  /** What a failing guard means; default block. */
  onFailure?: FailurePolicy;
  /** The consult loop's bounds (`--sequential`, `--deadline`). */
  consult?: ConsultOptions;
}

/**
 * The guards' decision on a consulted event (a tool call, a prompt, a stop). The agent can put an
 * ask to its user, so an ask stays an ask: its rendering says what each agent makes of it.
 */
export async function decideAgentEvent(
  runner: ToolRunner,
  request: AgentRequest,
  { preHooks, onFailure, consult }: DecideAgentOptions = {},
): Promise<ToolVerdict> {
  const { ToolHooks } = await import("../consult/tool_hooks.ts");
  const hooks = new ToolHooks(runner, { preHooks, onFailure });
  const options = { ...consult, canAsk: true };
  if (request.type === "tool" && request.consulted) {
    return await hooks.preToolCall(request.call, options);
  }
  if (request.type === "judge") return await hooks.agentEvent(request.call, options);
  throw new Error(`Cannot judge ${quoted(request.event)}`);
}

/** Runs the hooks of a notified event (a finished tool call, a session start ...). */
export async function tellAgentEvent(
  runner: Runner,
  request: AgentRequest,
  { postHooks }: { postHooks?: string[] } = {},
): Promise<void> {
  if (request.type === "tool") {
    const { ToolHooks } = await import("../consult/tool_hooks.ts");
    await new ToolHooks(runner, { postHooks }).postToolCall(request.call);
    return;
  }
  if (request.type === "notify" && request.pluginEvent !== POST_TOOL_CALL) {
    await runner.fire(request.pluginEvent, undefined, request.message);
  }
}

// The answer, in the agent's contract.

/** What a hook command prints and exits with. */
export interface CommandAnswer {
  exitCode: 0 | 2;
  stdout: string;
  stderr: string;
}

/** An answer in one form, and what of the decision the agent could not be told. */
export interface Rendered<T> {
  answer: T;
  /** Why part of the decision (the context) was left out, for a debug log. */
  dropped?: string;
}

type Json = Record<string, unknown>;

/** What the agent is told, before its form is chosen. */
type Reply =
  | { kind: "silent" }
  | { kind: "json"; body: Json }
  | { kind: "block"; reason: string };

/** How one agent reads the answers that differ between agents. */
interface Dialect {
  /** The JSON that has the user asked, or undefined where the agent cannot ask. */
  ask(request: AgentRequest, reason: string, answer: ToolVerdict): Json | undefined;
  /** The JSON that runs `args` instead, or why the agent cannot take them. */
  rewrite(request: AgentRequest, args: Json, context?: string): Json | string;
  /** The JSON that gives the model `context` with an allow, or undefined where it cannot. */
  context(request: AgentRequest, context: string): Json | undefined;
  /** A block as the JSON body of an exit 0 (an HTTP hook's answer). */
  deny(request: AgentRequest, reason: string): Json;
  /** A block the agent reads only as JSON, even from a command (Cursor's prompt and stop). */
  blockJson?(request: AgentRequest, reason: string): Json | undefined;
}

// Claude Code and Codex name the event inside `hookSpecificOutput`, which is otherwise ignored.
function specific(request: AgentRequest, fields: Json): Json {
  return { hookSpecificOutput: { hookEventName: request.event, ...fields } };
}

function withContext(context: string | undefined): Json {
  return context ? { additionalContext: context } : {};
}

const CLAUDE: Dialect = {
  ask: (request, reason, { args, context }) =>
    specific(request, {
      permissionDecision: "ask",
      permissionDecisionReason: reason,
      ...(args ? { updatedInput: args } : {}),
      ...withContext(context),
    }),
  // Applied without `permissionDecision`, which would skip Claude Code's own permission prompt.
  rewrite: (request, args, context) =>
    specific(request, { updatedInput: args, ...withContext(context) }),
  context: (request, context) =>
    request.pluginEvent === AGENT_STOP ? undefined : specific(request, withContext(context)),
  deny: (request, reason) =>
    request.pluginEvent === PRE_TOOL_CALL
      ? specific(request, { permissionDecision: "deny", permissionDecisionReason: reason })
      : { decision: "block", reason },
};

const CODEX: Dialect = {
  // Codex rejects "ask" as unsupported and runs the call.
  ask: () => undefined,
  // Codex takes `updatedInput` only with an approval.
  rewrite: (request, args, context) =>
    specific(request, {
      permissionDecision: "allow",
      updatedInput: args,
      ...withContext(context),
    }),
  context: CLAUDE.context,
  deny: (_request, reason) => ({ decision: "block", reason }),
};

const GEMINI: Dialect = {
  // Gemini CLI's "ask" in a non-interactive run ends the run with no output.
  ask: () => undefined,
  rewrite: (request, args) => {
    // Gemini CLI merges `tool_input` over the model's arguments: a key left out stays.
    const sent = request.info.input as Json;
    const before = sent.tool_input;
    if (isRecord(before)) {
      const kept = Object.keys(before).find((key) => !Object.hasOwn(args, key));
      if (kept !== undefined) {
        return `Gemini CLI cannot drop the argument ${
          quoted(kept)
        } from a tool call (it merges the rewritten arguments over the model's)`;
      }
    }
    return { hookSpecificOutput: { tool_input: args } };
  },
  context: (request, context) =>
    request.pluginEvent === AGENT_PROMPT ? specific(request, withContext(context)) : undefined,
  // Gemini CLI reads "deny"; Claude Code's deny object means nothing to it.
  deny: (_request, reason) => ({ decision: "deny", reason }),
};

// Cursor honours "ask" only before a shell command (its docs: accepted, not enforced, elsewhere),
// and takes rewritten input only on preToolUse.
const CURSOR_ASKS = new Set(["beforeShellExecution"]);
const CURSOR_REWRITES = new Set(["preToolUse"]);

const CURSOR: Dialect = {
  ask: (request, reason, { args }) =>
    CURSOR_ASKS.has(request.event) && args === undefined
      ? { permission: "ask", user_message: reason, agent_message: reason }
      : undefined,
  rewrite: (request, args) =>
    CURSOR_REWRITES.has(request.event)
      ? { permission: "allow", updated_input: args }
      : `Cursor cannot take a rewritten tool call on ${quoted(request.event)}`,
  context: () => undefined,
  deny: (request, reason) =>
    CURSOR.blockJson!(request, reason) ??
      { permission: "deny", user_message: reason, agent_message: reason },
  blockJson: (request, reason) =>
    request.pluginEvent === AGENT_PROMPT
      ? { continue: false, user_message: reason }
      : request.pluginEvent === AGENT_STOP
      ? { followup_message: reason }
      : undefined,
};

/** Every agent's dialect. */
const DIALECTS: Record<AgentName, Dialect> = {
  claude: CLAUDE,
  codex: CODEX,
  gemini: GEMINI,
  cursor: CURSOR,
};

/** The decision as a hook command answers it. */
export function commandAnswer(
  request: AgentRequest,
  answer: ToolVerdict,
): Rendered<CommandAnswer> {
  const { reply, dropped } = replyTo(request, answer);
  const dialect = DIALECTS[request.agent.name];
  if (reply.kind === "block") {
    const body = dialect.blockJson?.(request, reply.reason);
    if (body === undefined) {
      return { answer: { exitCode: 2, stdout: "", stderr: `${reply.reason}\n` }, dropped };
    }
    return { answer: { exitCode: 0, stdout: jsonText(body), stderr: "" }, dropped };
  }
  const stdout = reply.kind === "json" ? jsonText(reply.body) : "";
  return { answer: { exitCode: 0, stdout, stderr: "" }, dropped };
}

/** The decision as the JSON body an HTTP hook of the agent reads (with status 200). */
export function httpAnswer(request: AgentRequest, answer: ToolVerdict): Rendered<Json> {
  const { reply, dropped } = replyTo(request, answer);
  if (reply.kind === "block") {
    return { answer: DIALECTS[request.agent.name].deny(request, reply.reason), dropped };
  }
  return { answer: reply.kind === "json" ? reply.body : {}, dropped };
}

/** The prefix of a block's reason when an agent that cannot ask was asked to. */
export const NEEDS_APPROVAL = "needs approval: ";

function replyTo(request: AgentRequest, verdict: ToolVerdict): { reply: Reply; dropped?: string } {
  const dialect = DIALECTS[request.agent.name];
  const answer = {
    ...verdict,
    reason: forAgent(verdict.reason),
    context: verdict.context === undefined ? undefined : forAgent(verdict.context),
  };
  if (answer.action === "block") return { reply: block(answer.reason, answer) };
  if (answer.action === "ask") {
    const reason = answer.reason || fallbackReason(answer, "Asked by");
    const body = request.pluginEvent === PRE_TOOL_CALL
      ? dialect.ask(request, reason, answer)
      : undefined;
    if (body !== undefined) {
      const told = answer.context === undefined ||
        dialect.context(request, answer.context) !== undefined;
      return { reply: { kind: "json", body }, ...dropContext(request, answer, told) };
    }
    return { reply: block(`${NEEDS_APPROVAL}${reason}`, answer) };
  }
  if (answer.args !== undefined && request.pluginEvent === PRE_TOOL_CALL) {
    const body = dialect.rewrite(request, answer.args, answer.context);
    if (typeof body === "string") {
      return { reply: block(answer.reason ? `${body}: ${answer.reason}` : body, answer) };
    }
    const told = answer.context === undefined ||
      dialect.context(request, answer.context) !== undefined;
    return { reply: { kind: "json", body }, ...dropContext(request, answer, told) };
  }
  if (answer.context) {
    const body = dialect.context(request, answer.context);
    if (body !== undefined) return { reply: { kind: "json", body } };
    return { reply: { kind: "silent" }, ...dropContext(request, answer, false) };
  }
  return { reply: { kind: "silent" } };
}

function dropContext(
  request: AgentRequest,
  answer: ToolVerdict,
  told: boolean,
): { dropped?: string } {
  if (told || !answer.context) return {};
  return { dropped: `${request.agent.title} takes no context on ${quoted(request.event)}` };
}

/** The most of a reason or a context an agent is told: more would crowd the model's context. */
export const MAX_TOLD_CHARS = 8192;

// A guard's words as the agent shows them to the model and to its user: lines kept (CR LF read as
// LF), no other control character (a guard may quote the tool call, which the model wrote), and
// bounded, the cut never inside an escape or a surrogate pair.
function forAgent(text: string): string {
  const clean = escapeControlKeepingLines(text.replaceAll("\r\n", "\n"));
  if (clean.length <= MAX_TOLD_CHARS) return clean;
  let end = MAX_TOLD_CHARS;
  const escape = clean.lastIndexOf("\\x", end - 1);
  if (escape !== -1 && escape + 4 > end) end = escape;
  const last = clean.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${clean.slice(0, end)}... (${clean.length - end} characters cut)`;
}

// Never an empty reason: Codex and Gemini CLI read an exit 2 with an empty stderr as no answer.
// Nor one that parses as JSON: Gemini CLI would read it as the answer itself.
function block(reason: string, answer: ToolVerdict): Reply {
  let text = reason.trim() || fallbackReason(answer, "Blocked by");
  if (parsesAsJson(text)) text = `Blocked: ${text}`;
  return { kind: "block", reason: text };
}

function fallbackReason(answer: ToolVerdict, verb: string): string {
  return answer.by ? `${verb} ${quoted(answer.by)}` : `${verb} a tyhooks guard`;
}

function parsesAsJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}
