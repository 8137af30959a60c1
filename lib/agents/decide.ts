/**
 * What the plugins make of an agent's hook event: the guards' decision on a consulted one, the
 * hooks' run on a notified one. `tyhooks agent` (in-process) and the daemon's
 * `POST /v1/agent/{agent}` both go through here, so the decision is the same either way.
 *
 * @module
 */

import type { AgentRequest } from "./read.ts";
import type { ConsultOptions } from "../consult/consult.ts";
import type { FailurePolicy, ToolRunner, ToolVerdict } from "../consult/tool_hooks.ts";
import type { Runner } from "../hooks/runner.ts";
import { POST_TOOL_CALL } from "../events.ts";
import { quoted } from "../text.ts";

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
