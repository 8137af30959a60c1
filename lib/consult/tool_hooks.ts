/**
 * The tool-call guards: `pre_tool_call` hooks decide whether an agent's tool call may run,
 * `post_tool_call` hooks are told about it afterwards. Here too: what one pre hook's run means,
 * the guards a failed load lost (a guard that could not be loaded fails closed), and the wire
 * formats of tool calls, each as an interface and its reader.
 *
 * @module
 */

import {
  type ConsultHandler,
  type ConsultOptions,
  type ConsultRunner,
  pluginHandlers,
} from "./consult.ts";
import { decideGuards, type FailurePolicy, type ToolVerdict } from "./guards.ts";
import {
  failureReason,
  type RunOptions,
  type RunRecord,
  type RunResult,
  succeeded,
  toRecord,
} from "../process/run_script.ts";
import type { Plugin, PluginIndex } from "../plugins/types.ts";
import {
  type Infer,
  object,
  oneOf,
  optional,
  orDefault,
  type Same,
  type Schema,
  string,
  unknown,
} from "../wire/json.ts";
import { AGENT_PROMPT, POST_TOOL_CALL, PRE_TOOL_CALL } from "../events.ts";
import { recordDecision } from "../log.ts";

export type { FailurePolicy, ToolVerdict } from "./guards.ts";

/** Options of {@linkcode ToolHooks}. */
export interface ToolHooksOptions {
  /** Explicit pre hook scripts, asked before the plugins' (as `--pre-hook PATH`). */
  preHooks?: string[];
  /** Explicit post hook scripts (as `--post-hook PATH`). */
  postHooks?: string[];
  /** Default `block`. */
  onFailure?: FailurePolicy;
}

/** Options of {@linkcode ToolHooks.preToolCall} and {@linkcode ToolHooks.agentEvent}. */
export interface PreToolOptions extends ConsultOptions {
  /** Overrides the policy given to the constructor. */
  onFailure?: FailurePolicy;
  /**
   * A person can be asked (Claude Code's permission prompt): a guard's ask stays an ask. By
   * default it is a block whose reason starts `needs approval: `. A prompt or a stop is never
   * asked about.
   */
  canAsk?: boolean;
}

/** The answer to "may this prompt go to the model?" or "may the agent stop?". */
export interface AgentVerdict {
  /** For a stop, block means: keep working, told the reason. */
  action: "allow" | "block";
  /** Why, from the hook that decided; may be empty. */
  reason: string;
  /** Text for the model from every guard that gave some, joined by "\n" in decision order. */
  context?: string;
  /** Who decided a block: the plugin name. */
  by?: string;
}

/** What the tool hooks need of a runner (the `Runner` of `lib/hooks/runner.ts` is one). */
export interface ToolRunner extends ConsultRunner {
  /** The loaded plugins and the loader's warnings (a lost guard fails closed). */
  readonly index: PluginIndex;
  /** Runs an explicit script. */
  run(script: string, options?: RunOptions): Promise<RunResult>;
  /** Runs `plugin`'s script for `event`. */
  runHook(plugin: Plugin, event: string, options?: RunOptions): Promise<RunResult>;
}

/**
 * The tool-call hooks of one host: explicit scripts (run from the current directory) and the
 * plugins handling `pre_tool_call` and `post_tool_call`. Requires `--allow-run`, `--allow-read`,
 * `--allow-env`.
 *
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { ToolHooks } from "./tool_hooks.ts";
 * const hooks = new ToolHooks(new Runner({ dir: "/none", plugins: [], warnings: [] }));
 * const verdict = await hooks.preToolCall({ tool: "bash", args: { command: "ls" } });
 * console.assert(!hooks.hasPreHook() && verdict.action === "allow");
 * ```
 */
export class ToolHooks {
  #runner: ToolRunner;
  #pre: string[];
  #post: string[];
  #onFailure: FailurePolicy;

  /** The explicit scripts of `options`, then the plugins of `runner` handling the tool events. */
  constructor(runner: ToolRunner, options: ToolHooksOptions = {}) {
    this.#runner = runner;
    this.#pre = options.preHooks ?? [];
    this.#post = options.postHooks ?? [];
    this.#onFailure = options.onFailure ?? "block";
  }

  /** True when any pre hook is configured. Starts no process. */
  hasPreHook(): boolean {
    return this.#pre.length > 0 || this.#runner.handlers(PRE_TOOL_CALL).length > 0;
  }

  /** True when any post hook is configured. Starts no process. */
  hasPostHook(): boolean {
    return this.#post.length > 0 || this.#runner.handlers(POST_TOOL_CALL).length > 0;
  }

  /**
   * Asks the pre hooks (explicit ones first, then plugins by name): the first block wins, else an
   * ask (a block saying `needs approval: ` unless `canAsk`), else allow. A guard's `args` replaces
   * the input the next ones judge; a failing hook blocks under the `block` policy. Never rejects.
   */
  async preToolCall(call: ToolCall, options: PreToolOptions = {}): Promise<ToolVerdict> {
    const startedAt = performance.now();
    const runner = this.#runner;
    const handlers: ConsultHandler[] = [
      ...this.#pre.map((script) => ({
        plugin: null,
        script,
        timeoutMs: runner.timeoutFor(PRE_TOOL_CALL, null),
      })),
      ...pluginHandlers(runner, PRE_TOOL_CALL, await this.#plugins(PRE_TOOL_CALL, call.tool)),
    ];
    const verdict = await decideGuards(runner, {
      event: PRE_TOOL_CALL,
      handlers,
      index: runner.index,
      args: call.args,
      request: (args) => JSON.stringify(request(PRE_TOOL_CALL, { ...call, args })) + "\n",
      rewrites: true,
      policy: options.onFailure ?? this.#onFailure,
      noun: "pre-tool-call hook",
      subject: "Tool call",
      fields: { tool: call.tool },
    }, options);
    const answer = verdict.action === "ask" && !options.canAsk ? needsApproval(verdict) : verdict;
    this.#record(PRE_TOOL_CALL, call, { handlers, verdict: answer, startedAt });
    return answer;
  }

  /**
   * Asks the guards of an agent's `agent.prompt` or `agent.stop` as `preToolCall` does (a stop's
   * block: keep working), an ask being a block; `args` is ignored. Never rejects.
   */
  async agentEvent(call: AgentEventCall, options: PreToolOptions = {}): Promise<AgentVerdict> {
    const startedAt = performance.now();
    const runner = this.#runner;
    const handlers = pluginHandlers(runner, call.event);
    const verdict = await decideGuards(runner, {
      event: call.event,
      handlers,
      index: runner.index,
      args: undefined,
      request: () => JSON.stringify(agentRequest(call)) + "\n",
      rewrites: false,
      policy: options.onFailure ?? this.#onFailure,
      noun: `${call.event} hook`,
      subject: call.event === AGENT_PROMPT ? "Prompt" : "Stop",
      fields: { agent: call.agent?.name },
    }, options);
    const { args: _, ...rest } = verdict.action === "ask" ? needsApproval(verdict) : verdict;
    this.#record(call.event, call, { handlers, verdict: rest, startedAt });
    return rest as AgentVerdict;
  }

  // The decision log's line of a decision some guard took part in (or a lost one made): who
  // decided a block or an ask, else the guards that were asked.
  #record(
    event: string,
    call: ToolCall | AgentEventCall,
    { handlers, verdict, startedAt }: {
      handlers: ConsultHandler[];
      verdict: Pick<ToolVerdict, "action" | "reason" | "by">;
      startedAt: number;
    },
  ): void {
    if (handlers.length === 0 && verdict.action === "allow") return;
    const asked = handlers.map((handler) => handler.plugin?.name ?? handler.script);
    const tool = "tool" in call ? { tool: call.tool, args: call.args ?? {} } : {};
    recordDecision({
      event,
      agent: call.agent?.name ?? ("platform" in call ? call.platform : undefined),
      ...tool,
      decision: verdict.action,
      reason: verdict.reason,
      plugin: verdict.by ?? asked.join(","),
      startedAt,
    }, this.#runner.log);
  }

  /** Tells every post hook about a finished call, at once; failures are logged. Never rejects. */
  async postToolCall(call: PostToolCall): Promise<RunRecord[]> {
    const runner = this.#runner;
    const hooks = [
      ...this.#post.map((script) => ({
        label: `"${script}"`,
        plugin: null,
        timeoutMs: runner.timeoutFor(POST_TOOL_CALL, null),
        run: (options: RunOptions) => runner.run(script, options),
      })),
      ...(await this.#plugins(POST_TOOL_CALL, call.tool)).map((plugin) => ({
        label: `of plugin "${plugin.name}"`,
        plugin: plugin.name,
        timeoutMs: runner.timeoutFor(POST_TOOL_CALL, plugin),
        run: (options: RunOptions) => runner.runHook(plugin, POST_TOOL_CALL, options),
      })),
    ];
    if (hooks.length === 0) return [];
    const stdin = JSON.stringify(request(POST_TOOL_CALL, call)) + "\n";
    const results = await Promise.all(
      hooks.map((hook) => hook.run({ stdin, timeoutMs: hook.timeoutMs, mode: "notify" })),
    );
    results.forEach((result, i) => {
      if (succeeded(result)) return;
      const { label, plugin, timeoutMs } = hooks[i];
      const message = `Post-tool-call hook ${label} failed: ${failureReason(result, timeoutMs)}`;
      runner.log.log("warn", message, { plugin: plugin ?? undefined, tool: call.tool });
    });
    return results.map(toRecord);
  }

  // The plugins whose hook for `event` judges `tool`: a hook whose `tools` setting does not
  // match is not even started (SPEC: tool matchers).
  async #plugins(event: string, tool: string): Promise<Plugin[]> {
    const plugins = this.#runner.handlers(event);
    // Most hooks judge every tool: the matchers' module loads only for one with a `tools` setting.
    if (plugins.every((plugin) => plugin.settings?.[event]?.tools === undefined)) return plugins;
    const { hookSettings, toolMatches } = await import("../plugins/hook_settings.ts");
    const asked = await Promise.all(
      plugins.map((plugin) => toolMatches(hookSettings(plugin, event), tool)),
    );
    return plugins.filter((_, i) => asked[i]);
  }
}

// Where nobody can be asked, an ask is a block that says so.
function needsApproval(verdict: ToolVerdict): ToolVerdict {
  const { args: _, ...rest } = verdict;
  return { ...rest, action: "block", reason: `needs approval: ${verdict.reason}` };
}

// The seed's fields first, as old hooks read them; an agent's only when the call has them.
function request(hook: ToolHookRequest["hook"], call: PostToolCall): ToolHookRequest {
  return {
    hook,
    tool: call.tool,
    args: call.args ?? {},
    ...(hook === POST_TOOL_CALL ? { result: call.result ?? "" } : {}),
    ...(hook === POST_TOOL_CALL && call.error ? { error: call.error } : {}),
    platform: call.platform ?? "",
    user_id: call.user_id ?? "",
    ...(call.cwd === undefined ? {} : { cwd: call.cwd }),
    ...(call.agent === undefined ? {} : { agent: call.agent }),
  };
}

function agentRequest(call: AgentEventCall): AgentEventRequest {
  return {
    hook: call.event,
    ...(call.event === AGENT_PROMPT ? { prompt: call.prompt ?? "" } : {}),
    ...(call.cwd === undefined ? {} : { cwd: call.cwd }),
    ...(call.agent === undefined ? {} : { agent: call.agent }),
  };
}

// The wire formats: the call a host asks about, a coding agent's own events, and what a hook
// reads on stdin. What a guard answers is in guards.ts.

/** The coding agent a call comes from, as hooks are told. */
export interface AgentInfo {
  /** The agent, as `tyhooks agent` names it (`claude`, `gemini`, `codex`, `cursor`). */
  name: string;
  /** Its own name of the hook event, e.g. `PreToolUse`. */
  event: string;
  /** Its session; may be empty. */
  session_id: string;
  /** The agent's hook JSON, verbatim. */
  input: unknown;
}

/**
 * A tool call as a host describes it: every field but `tool` may be left out (`ToolCallSchema`
 * fills in the defaults of the seed's fields).
 */
export interface ToolCall {
  /** The tool's name, e.g. `bash`; not empty. */
  tool: string;
  /** Its arguments, any JSON value; default `{}`. */
  args?: unknown;
  /** Where the call comes from, e.g. `cli`; default `""`. */
  platform?: string;
  /** Who made it; default `""`. */
  user_id?: string;
  /** The agent's working directory; hooks are told it only when given. */
  cwd?: string;
  /** The coding agent the call comes from; hooks are told it only when given. */
  agent?: AgentInfo;
}
/**
 * A finished tool call: the call, its result and its error (`PostToolCallSchema` fills in the
 * defaults).
 */
export interface PostToolCall extends ToolCall {
  /** What the tool returned; default `""`. */
  result?: string;
  /** Why it failed; default `""`, no error. */
  error?: string;
}

/** A coding agent's prompt about to go to the model, or its wish to stop. */
export interface AgentEventCall {
  /** Which: a prompt about to go to the model, or the agent about to stop. */
  event: "agent.prompt" | "agent.stop";
  /** The prompt (`agent.prompt` only); default `""`. */
  prompt?: string;
  /** The agent's working directory; hooks are told it only when given. */
  cwd?: string;
  /** The coding agent; hooks are told it only when given. */
  agent?: AgentInfo;
}

/** The request a tool hook reads on stdin. */
export interface ToolHookRequest {
  /** Which hook is asked: `pre_tool_call` may block the call, `post_tool_call` is told of it. */
  hook: "pre_tool_call" | "post_tool_call";
  /** The tool's name. */
  tool: string;
  /** Its arguments, any JSON value. */
  args: unknown;
  /** What the tool returned: sent to post hooks only. */
  result?: string;
  /** Why the tool failed: sent to post hooks only, and only when it did. */
  error?: string;
  /** Where the call comes from; may be empty. */
  platform: string;
  /** Who made it; may be empty. */
  user_id: string;
  /** The agent's working directory, when the call comes from one. */
  cwd?: string;
  /** The coding agent, when the call comes from one. */
  agent?: AgentInfo;
}

/** The request an `agent.prompt` or `agent.stop` hook reads on stdin. */
export interface AgentEventRequest {
  /** Which hook is asked. */
  hook: "agent.prompt" | "agent.stop";
  /** The prompt: sent to `agent.prompt` hooks only. */
  prompt?: string;
  /** The agent's working directory, when known. */
  cwd?: string;
  /** The coding agent, when known. */
  agent?: AgentInfo;
}

const agentInfo = object({
  name: string(),
  event: string(),
  session_id: string(),
  input: unknown(),
});
true satisfies Same<Infer<typeof agentInfo>, AgentInfo>;

const call = {
  tool: string({ nonEmpty: true }),
  args: orDefault(unknown(), {}),
  platform: orDefault(string(), ""),
  user_id: orDefault(string(), ""),
  cwd: optional(string()),
  agent: optional(agentInfo),
};
// What reading a call gives: the seed's fields filled in, an agent's only when given.
type Filled<T> = { [K in keyof T]: K extends "cwd" | "agent" ? T[K] : Exclude<T[K], undefined> };
type Read<T> =
  & { [K in keyof T as K extends "cwd" | "agent" ? never : K]-?: Filled<T>[K] }
  & {
    [K in keyof T as K extends "cwd" | "agent" ? K : never]?: Filled<T>[K];
  };
type Flat<T> = { [K in keyof T]: T[K] };

/** A tool call as a host describes it (`POST /v1/tool/pre`); reading fills in the defaults. */
export const ToolCallSchema = object(call);
true satisfies Same<Infer<typeof ToolCallSchema>, Flat<Read<ToolCall>>>;

/** A finished tool call (`POST /v1/tool/post`); reading fills in the defaults. */
export const PostToolCallSchema = object({
  ...call,
  result: orDefault(string(), ""),
  error: orDefault(string(), ""),
});
true satisfies Same<Infer<typeof PostToolCallSchema>, Flat<Read<PostToolCall>>>;

const toolHookRequest = object({
  hook: oneOf([PRE_TOOL_CALL, POST_TOOL_CALL]),
  tool: string(),
  args: unknown(),
  result: optional(string()),
  error: optional(string()),
  platform: string(),
  user_id: string(),
  cwd: optional(string()),
  agent: optional(agentInfo),
});
true satisfies Same<Infer<typeof toolHookRequest>, ToolHookRequest>;

/** The request a `pre_tool_call` or `post_tool_call` hook reads on stdin. */
export const ToolHookRequestSchema: Schema<ToolHookRequest> = toolHookRequest;
