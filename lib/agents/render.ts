/**
 * Answering an agent: a guard's decision in the agent's own contract, as a hook command
 * (`{exitCode, stdout, stderr}`) and as the JSON body of an HTTP hook. Allow is silence, never an
 * approval; a block is exit 2 with the reason alone on stderr (every agent reads that, REPORT of
 * the agent lab); what an agent cannot be told is dropped (context) or blocks, naming why (an ask
 * or a rewrite it would ignore and run the call). Pure.
 *
 * @module
 */

import type { AgentName } from "./table.ts";
import type { AgentRequest } from "./read.ts";
import type { ToolVerdict } from "../consult/tool_hooks.ts";
import { AGENT_PROMPT, AGENT_STOP, PRE_TOOL_CALL } from "../events.ts";
import { quoted } from "../text.ts";
import { isRecord } from "../wire/json.ts";

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
    return { answer: { exitCode: 0, stdout: JSON.stringify(body) + "\n", stderr: "" }, dropped };
  }
  const stdout = reply.kind === "json" ? JSON.stringify(reply.body) + "\n" : "";
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

function replyTo(request: AgentRequest, answer: ToolVerdict): { reply: Reply; dropped?: string } {
  const dialect = DIALECTS[request.agent.name];
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
