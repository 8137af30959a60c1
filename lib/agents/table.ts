/**
 * The coding agents tyhooks answers, one row each: names, settings files, timeout unit, and the
 * plugin event each hook event is. Everything else reads it: a new agent, or a new event of one,
 * is a new row.
 *
 * @module
 */

import {
  AGENT_COMPACT,
  AGENT_NOTIFICATION,
  AGENT_PROMPT,
  AGENT_SESSION_END,
  AGENT_SESSION_START,
  AGENT_STOP,
  POST_TOOL_CALL,
  PRE_TOOL_CALL,
} from "../events.ts";

/** The agents, as `tyhooks agent AGENT` names them. */
export type AgentName = "claude" | "gemini" | "codex" | "cursor";

/**
 * The shape of an agent's hook settings file. `claude`: `{"hooks": {EVENT: [{"matcher",
 * "hooks": [{"type": "command", "command", "timeout"}]}]}}` (Claude Code, Codex and Gemini CLI);
 * `cursor`: `{"version": 1, "hooks": {EVENT: [{"command", "timeout", "failClosed"}]}}`.
 */
export type SettingsFormat = "claude" | "cursor";

/** One agent. */
export interface AgentSpec {
  readonly name: AgentName;
  /** What people call it. */
  readonly title: string;
  /** The request's `platform` under this agent. */
  readonly platform: string;
  /**
   * The hook settings file, user-wide: `~` is the home dir, `${VAR:-DEFAULT}` the environment
   * variable VAR when it is set and not empty, else DEFAULT.
   */
  readonly userSettings: string;
  /** The hook settings file of a project, relative to its dir. */
  readonly projectSettings: string;
  readonly settingsFormat: SettingsFormat;
  /** Its settings file may hold comments (Gemini CLI strips them first); a rewrite loses them. */
  readonly settingsComments: boolean;
  /** The unit of the `timeout` its settings give a hook. */
  readonly timeoutUnit: "s" | "ms";
  /** Its tool events' entries take a `matcher` (`*` = every tool). */
  readonly matchers: boolean;
  /**
   * Its hook events (as `hook_event_name` names them) and the plugin event each one is. Any
   * other event it sends is the notified event `agent.<snake_case name>` ({@linkcode pluginEvent}).
   */
  readonly events: Readonly<Record<string, string>>;
}

/** Every agent tyhooks answers. */
export const AGENTS: readonly AgentSpec[] = [
  {
    name: "claude",
    title: "Claude Code",
    platform: "claude-code",
    userSettings: "~/.claude/settings.json",
    projectSettings: ".claude/settings.json",
    settingsFormat: "claude",
    settingsComments: false,
    timeoutUnit: "s",
    matchers: true,
    events: {
      PreToolUse: PRE_TOOL_CALL,
      PostToolUse: POST_TOOL_CALL,
      PostToolUseFailure: POST_TOOL_CALL,
      UserPromptSubmit: AGENT_PROMPT,
      Stop: AGENT_STOP,
      SubagentStop: AGENT_STOP,
      SessionStart: AGENT_SESSION_START,
      SessionEnd: AGENT_SESSION_END,
      Notification: AGENT_NOTIFICATION,
      PreCompact: AGENT_COMPACT,
    },
  },
  {
    name: "gemini",
    title: "Gemini CLI",
    platform: "gemini-cli",
    userSettings: "~/.gemini/settings.json",
    projectSettings: ".gemini/settings.json",
    settingsFormat: "claude",
    settingsComments: true,
    timeoutUnit: "ms",
    matchers: true,
    events: {
      BeforeTool: PRE_TOOL_CALL,
      AfterTool: POST_TOOL_CALL,
      BeforeAgent: AGENT_PROMPT,
      AfterAgent: AGENT_STOP,
      SessionStart: AGENT_SESSION_START,
      SessionEnd: AGENT_SESSION_END,
      Notification: AGENT_NOTIFICATION,
      PreCompress: AGENT_COMPACT,
    },
  },
  {
    name: "codex",
    title: "Codex",
    platform: "codex",
    userSettings: "${CODEX_HOME:-~/.codex}/hooks.json",
    projectSettings: ".codex/hooks.json",
    settingsFormat: "claude",
    settingsComments: false,
    timeoutUnit: "s",
    matchers: true,
    events: {
      PreToolUse: PRE_TOOL_CALL,
      PostToolUse: POST_TOOL_CALL,
      UserPromptSubmit: AGENT_PROMPT,
      Stop: AGENT_STOP,
      SessionStart: AGENT_SESSION_START,
      SessionEnd: AGENT_SESSION_END,
      PreCompact: AGENT_COMPACT,
    },
  },
  {
    name: "cursor",
    title: "Cursor",
    platform: "cursor",
    userSettings: "~/.cursor/hooks.json",
    projectSettings: ".cursor/hooks.json",
    settingsFormat: "cursor",
    settingsComments: false,
    timeoutUnit: "s",
    matchers: false,
    events: {
      preToolUse: PRE_TOOL_CALL,
      beforeShellExecution: PRE_TOOL_CALL,
      beforeMCPExecution: PRE_TOOL_CALL,
      beforeReadFile: PRE_TOOL_CALL,
      postToolUse: POST_TOOL_CALL,
      postToolUseFailure: POST_TOOL_CALL,
      afterShellExecution: POST_TOOL_CALL,
      afterMCPExecution: POST_TOOL_CALL,
      afterFileEdit: POST_TOOL_CALL,
      beforeSubmitPrompt: AGENT_PROMPT,
      stop: AGENT_STOP,
      sessionStart: AGENT_SESSION_START,
      sessionEnd: AGENT_SESSION_END,
      preCompact: AGENT_COMPACT,
    },
  },
];

/** The agent named `name`, or undefined. */
export function agentSpec(name: string): AgentSpec | undefined {
  return AGENTS.find((agent) => agent.name === name);
}

/**
 * The plugin event an agent's hook event is: its row's, else `agent.<snake_case name>`
 * (`SubagentStart` -> `agent.subagent_start`), a notified event.
 */
export function pluginEvent(agent: AgentSpec, event: string): string {
  const snake = event.replace(/([a-z0-9])([A-Z])/g, "$1_$2")
    .replace(/([A-Z]+)([A-Z][a-z])/g, "$1_$2").toLowerCase();
  return agent.events[event] ?? `agent.${snake}`;
}

/**
 * The other agents that send `event` as a tool call or a prompt to judge, when `agent` sends no
 * such event: a hook wired with the wrong agent's name (`agent gemini` in Claude Code's settings)
 * would otherwise take their tool call for a notified event and let it pass unjudged. Not a stop,
 * whose block tells an agent to keep working: another agent's stop is read as its name maps
 * ({@linkcode pluginEvent}: `Stop` is `agent.stop` to every agent, `SubagentStop` notified).
 */
export function judgedByOthers(agent: AgentSpec, event: string): AgentSpec[] {
  if (Object.hasOwn(agent.events, event)) return [];
  return AGENTS.filter((other) =>
    Object.hasOwn(other.events, event) &&
    (other.events[event] === PRE_TOOL_CALL || other.events[event] === AGENT_PROMPT)
  );
}
