/**
 * The tool-call guards: `pre_tool_call` hooks decide whether an agent's tool call may run,
 * `post_tool_call` hooks are told about it afterwards.
 *
 * @module
 */

import type { Runner } from "../hooks/runner.ts";
import { consult, type ConsultHandler, type ConsultOptions } from "../consult/consult.ts";
import { failureReason, type RunRecord, succeeded, toRecord } from "../process/record.ts";
import type { RunOptions } from "../process/run_script.ts";
import { judgePreRun, type PreOutcome } from "./pre_verdict.ts";
import { lostGuard } from "./lost_guards.ts";
import { hookSettings, toolMatches } from "../plugins/hook_settings.ts";
import type { Plugin } from "../plugins/types.ts";
import type { PostToolCall, ToolCall, ToolHookRequest } from "./tool_schema.ts";

/**
 * The event of pre hooks.
 *
 * @example
 * ```ts
 * import { PRE_TOOL_EVENT } from "./tool_hooks.ts";
 * console.assert(PRE_TOOL_EVENT === "pre_tool_call");
 * ```
 */
export const PRE_TOOL_EVENT = "pre_tool_call";
/**
 * The event of post hooks.
 *
 * @example
 * ```ts
 * import { POST_TOOL_EVENT } from "./tool_hooks.ts";
 * console.assert(POST_TOOL_EVENT === "post_tool_call");
 * ```
 */
export const POST_TOOL_EVENT = "post_tool_call";

/**
 * What a failing pre hook (timeout, crash, bad answer) means: `block` (fail closed) or `allow`.
 *
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { type FailurePolicy, ToolHooks } from "./tool_hooks.ts";
 * const onFailure: FailurePolicy = "allow";
 * const hooks = new ToolHooks(new Runner({ dir: "/none", plugins: [], warnings: [] }), {
 *   preHooks: ["/nonexistent/guard.sh"],
 *   onFailure,
 * });
 * const verdict = await hooks.preToolCall({ tool: "bash" });
 * console.assert(verdict.action === "allow"); // the guard could not start: policy says allow
 * ```
 */
export type FailurePolicy = "block" | "allow";

/**
 * Options of {@linkcode ToolHooks}.
 *
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { ToolHooks, type ToolHooksOptions } from "./tool_hooks.ts";
 * const options: ToolHooksOptions = { preHooks: ["/nonexistent/guard.sh"] };
 * const hooks = new ToolHooks(new Runner({ dir: "/none", plugins: [], warnings: [] }), options);
 * const verdict = await hooks.preToolCall({ tool: "bash" });
 * console.assert(hooks.hasPreHook() && verdict.action === "block"); // fails closed by default
 * ```
 */
export interface ToolHooksOptions {
  /** Explicit pre hook scripts, asked before the plugins' (as `--pre-hook PATH`). */
  preHooks?: string[];
  /** Explicit post hook scripts (as `--post-hook PATH`). */
  postHooks?: string[];
  /** Default `block`. */
  onFailure?: FailurePolicy;
}

/**
 * Options of {@linkcode ToolHooks.preToolCall}.
 *
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { type PreToolOptions, ToolHooks } from "./tool_hooks.ts";
 * const hooks = new ToolHooks(new Runner({ dir: "/none", plugins: [], warnings: [] }), {
 *   preHooks: ["/nonexistent/guard.sh"],
 * });
 * const options: PreToolOptions = { onFailure: "allow", deadlineMs: 1000 };
 * console.assert((await hooks.preToolCall({ tool: "bash" }, options)).action === "allow");
 * ```
 */
export interface PreToolOptions extends ConsultOptions {
  /** Overrides the policy given to the constructor. */
  onFailure?: FailurePolicy;
}

/**
 * The answer to "may this tool call run?" (`tool pre` prints exactly this).
 *
 * @example
 * ```ts
 * import type { ToolVerdict } from "./tool_hooks.ts";
 * const verdict: ToolVerdict = { action: "block", reason: "rm -rf is not allowed" };
 * console.assert(JSON.stringify(verdict) === '{"action":"block","reason":"rm -rf is not allowed"}');
 * ```
 */
export interface ToolVerdict {
  /** Whether the call may run. */
  action: "allow" | "block";
  /** Why, from the hook that decided; may be empty. */
  reason: string;
}

/**
 * The tool-call hooks of one host: explicit scripts plus the plugins handling `pre_tool_call`
 * and `post_tool_call`. Explicit scripts run from the current directory with the inherited
 * environment; plugin scripts from their plugin dir with `TASK_PLUGIN_NAME`/`TASK_PLUGIN_DIR`.
 *
 * Requires `--allow-run`, `--allow-read`, `--allow-env`.
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
  #runner: Runner;
  #pre: string[];
  #post: string[];
  #onFailure: FailurePolicy;

  /**
   * Gathers the hooks: explicit scripts first, then the plugins handling the tool events.
   *
   * @param runner The runner (plugin index, tool timeout, grace, logger, abort signal).
   * @param options Explicit hook scripts and the failure policy.
   */
  constructor(runner: Runner, options: ToolHooksOptions = {}) {
    this.#runner = runner;
    this.#pre = options.preHooks ?? [];
    this.#post = options.postHooks ?? [];
    this.#onFailure = options.onFailure ?? "block";
  }

  /** True when any pre hook is configured. Starts no process. */
  hasPreHook(): boolean {
    return this.#pre.length > 0 || this.#runner.handlers(PRE_TOOL_EVENT).length > 0;
  }

  /** True when any post hook is configured. Starts no process. */
  hasPostHook(): boolean {
    return this.#post.length > 0 || this.#runner.handlers(POST_TOOL_EVENT).length > 0;
  }

  /**
   * Asks the pre hooks, decided in order (explicit ones first, then plugins by name) through the
   * consult loop: the first block wins. A failing hook (or one still running at the deadline)
   * blocks under the `block` policy and is skipped under `allow`. No hook: allow. Never rejects.
   *
   * @param call The tool call.
   * @param options `onFailure`, `deadlineMs`, `sequential`.
   * @returns The verdict; a block always carries a reason naming who blocked.
   */
  async preToolCall(call: ToolCall, options: PreToolOptions = {}): Promise<ToolVerdict> {
    const runner = this.#runner;
    const log = runner.log;
    const policy = options.onFailure ?? this.#onFailure;
    if (policy === "block") {
      const lost = await lostGuard(runner.index);
      if (lost !== null) {
        const failed = `Cannot trust the pre-tool-call hooks: ${lost}`;
        log.log("error", `${failed}; blocking the call`, {
          tool: call.tool,
          hint: "fix the plugin (tyhooks plugins validate), or --on-failure allow",
        });
        return { action: "block", reason: `${failed} (failure policy: block)` };
      }
    }
    const handlers: ConsultHandler[] = [
      ...this.#pre.map((script) => ({
        plugin: null,
        script,
        timeoutMs: runner.timeoutFor(PRE_TOOL_EVENT, null),
      })),
      ...this.#plugins(PRE_TOOL_EVENT, call.tool).map((plugin) => ({
        plugin,
        script: plugin.hooks[PRE_TOOL_EVENT],
        timeoutMs: runner.timeoutFor(PRE_TOOL_EVENT, plugin),
      })),
    ];
    if (handlers.length === 0) return { action: "allow", reason: "" };
    const decided = await consult<PreOutcome>(runner, {
      event: PRE_TOOL_EVENT,
      handlers,
      stdin: JSON.stringify(request(PRE_TOOL_EVENT, call)) + "\n",
      read: (answer) =>
        answer.ran
          ? judgePreRun(answer.result, answer.timeoutMs)
          : { kind: "failure", reason: answer.reason },
      settles: (outcome) =>
        outcome.kind === "block" || (outcome.kind === "failure" && policy === "block"),
    }, options);
    let allowReason = "";
    for (const { handler, meaning: outcome } of decided) {
      const label = handler.plugin ? `of plugin "${handler.plugin.name}"` : `"${handler.script}"`;
      const fields = { plugin: handler.plugin?.name, tool: call.tool };
      if (outcome.kind === "block") {
        const reason = outcome.reason || `Blocked by the pre-tool-call hook ${label}`;
        log.log("info", `Tool call blocked by the hook ${label}`, { ...fields, reason });
        return { action: "block", reason };
      }
      if (outcome.kind === "allow") {
        allowReason ||= outcome.reason;
        continue;
      }
      const failed = `Pre-tool-call hook ${label} failed: ${outcome.reason}`;
      if (policy === "block") {
        log.log("error", `${failed}; blocking the call`, {
          ...fields,
          hint: "--on-failure allow lets failing hooks through",
        });
        return { action: "block", reason: `${failed} (failure policy: block)` };
      }
      log.log("warn", `${failed}; allowed by the failure policy`, fields);
      allowReason ||= `${failed} (failure policy: allow)`;
    }
    return { action: "allow", reason: allowReason };
  }

  /**
   * Tells every post hook about a finished call, all at once: fire-and-forget (failures are
   * logged, never returned as errors). The request carries `result`, and `error` only when
   * there is one. Never rejects.
   *
   * @param call The finished call.
   * @returns The run records, when every hook has ended.
   */
  async postToolCall(call: PostToolCall): Promise<RunRecord[]> {
    const runner = this.#runner;
    const hooks = [
      ...this.#post.map((script) => ({
        label: `"${script}"`,
        plugin: null,
        timeoutMs: runner.timeoutFor(POST_TOOL_EVENT, null),
        run: (options: RunOptions) => runner.run(script, options),
      })),
      ...this.#plugins(POST_TOOL_EVENT, call.tool).map((plugin) => ({
        label: `of plugin "${plugin.name}"`,
        plugin: plugin.name,
        timeoutMs: runner.timeoutFor(POST_TOOL_EVENT, plugin),
        run: (options: RunOptions) => runner.runHook(plugin, POST_TOOL_EVENT, options),
      })),
    ];
    if (hooks.length === 0) return [];
    const stdin = JSON.stringify(request(POST_TOOL_EVENT, call)) + "\n";
    const results = await Promise.all(
      hooks.map((hook) => hook.run({ stdin, timeoutMs: hook.timeoutMs, mode: "notify" })),
    );
    results.forEach((result, i) => {
      if (succeeded(result)) return;
      runner.log.log(
        "warn",
        `Post-tool-call hook ${hooks[i].label} failed: ${
          failureReason(result, hooks[i].timeoutMs)
        }`,
        { plugin: hooks[i].plugin ?? undefined, tool: call.tool },
      );
    });
    return results.map(toRecord);
  }

  // The plugins whose hook for `event` judges `tool`: a hook whose `tools` setting does not
  // match is not even started (SPEC: tool matchers).
  #plugins(event: string, tool: string): Plugin[] {
    return this.#runner.handlers(event).filter((plugin) =>
      toolMatches(hookSettings(plugin, event), tool)
    );
  }
}

function request(hook: ToolHookRequest["hook"], call: PostToolCall): ToolHookRequest {
  return {
    hook,
    tool: call.tool,
    args: call.args ?? {},
    ...(hook === POST_TOOL_EVENT ? { result: call.result ?? "" } : {}),
    ...(hook === POST_TOOL_EVENT && call.error ? { error: call.error } : {}),
    platform: call.platform ?? "",
    user_id: call.user_id ?? "",
  };
}
