/**
 * What the agent command hands the guards and what they answer: the shapes
 * `lib/consult/tool_hooks.ts` gives guards that can ask, rewrite and inform. Until that file
 * declares them they are declared here, as the same interfaces, so that switching to it is a
 * change of imports.
 *
 * @module
 */

import type { PostToolCall } from "../consult/tool_hooks.ts";
import type { AGENT_PROMPT, AGENT_STOP } from "../events.ts";

/** Which agent asked, for a guard that wants more than the tool call: the payload as it came. */
export interface AgentInfo {
  /** The agent, as `tyhooks agent AGENT` names it. */
  name: string;
  /** Its hook event, as it names it (`PreToolUse`, `beforeShellExecution`). */
  event: string;
  /** Its session (Cursor: the conversation); may be empty. */
  session_id: string;
  /** The hook JSON the agent sent, verbatim. */
  input: unknown;
}

/** A tool call from an agent: the call, where the agent stands, and who it is. */
export interface AgentToolCall extends PostToolCall {
  /** The agent's working directory; may be empty. */
  cwd?: string;
  agent?: AgentInfo;
}

/** A prompt about to be sent, or an agent about to stop. */
export interface AgentEventCall {
  event: typeof AGENT_PROMPT | typeof AGENT_STOP;
  /** The prompt, for `agent.prompt`. */
  prompt?: string;
  cwd?: string;
  agent?: AgentInfo;
}

/**
 * A guard's decision as an agent is answered: a tool call's (which may ask, and may carry the
 * arguments to run instead) or a prompt's or stop's (allow or block).
 */
export interface AgentAnswer {
  action: "allow" | "block" | "ask";
  /** Why; may be empty. */
  reason: string;
  /** The tool input to run instead, with allow or ask. */
  args?: Record<string, unknown>;
  /** Text for the model. */
  context?: string;
  /** Who decided a block or an ask. */
  by?: string;
}
