/**
 * The tool-call guards: `pre_tool_call` hooks decide whether an agent's tool call may run,
 * `post_tool_call` hooks are told about it afterwards. Here too: what one pre hook's run means,
 * the guards a failed load lost (a guard that could not be loaded fails closed), and the wire
 * formats of tool calls, each as an interface and its reader.
 *
 * @module
 */

import {
  consult,
  type ConsultHandler,
  type ConsultOptions,
  type ConsultRunner,
} from "./consult.ts";
import {
  failureReason,
  type RunOptions,
  type RunRecord,
  type RunResult,
  succeeded,
  toRecord,
} from "../process/run_script.ts";
import { hookSettings, toolMatches } from "../plugins/hook_settings.ts";
import type { LoadWarning, Plugin, PluginIndex } from "../plugins/types.ts";
import { basename, dirname } from "../path.ts";
import {
  type Infer,
  isRecord,
  object,
  oneOf,
  optional,
  orDefault,
  parseAnswer,
  type Same,
  type Schema,
  string,
  unknown,
} from "../wire/json.ts";
import { POST_TOOL_CALL, PRE_TOOL_CALL } from "../events.ts";
import { recordDecision } from "../decisions.ts";

/** What a failing pre hook (timeout, crash, bad answer) means: `block` (fail closed) or `allow`. */
export type FailurePolicy = "block" | "allow";

/** Options of {@linkcode ToolHooks}. */
export interface ToolHooksOptions {
  /** Explicit pre hook scripts, asked before the plugins' (as `--pre-hook PATH`). */
  preHooks?: string[];
  /** Explicit post hook scripts (as `--post-hook PATH`). */
  postHooks?: string[];
  /** Default `block`. */
  onFailure?: FailurePolicy;
}

/** Options of {@linkcode ToolHooks.preToolCall}. */
export interface PreToolOptions extends ConsultOptions {
  /** Overrides the policy given to the constructor. */
  onFailure?: FailurePolicy;
}

/** The answer to "may this tool call run?" (`tool pre` prints exactly this). */
export interface ToolVerdict {
  /** Whether the call may run. */
  action: "allow" | "block";
  /** Why, from the hook that decided; may be empty. */
  reason: string;
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
   * Asks the pre hooks, decided in order (explicit ones first, then plugins by name) through the
   * consult loop: the first block wins. A failing hook (or one still running at the deadline)
   * blocks under the `block` policy and is skipped under `allow`. No hook: allow. A block always
   * carries a reason naming who blocked. A decision any hook took part in goes to the decision
   * log. Never rejects.
   */
  async preToolCall(call: ToolCall, options: PreToolOptions = {}): Promise<ToolVerdict> {
    const startedAt = performance.now();
    const { by, ...verdict } = await this.#judge(call, options);
    if (by === undefined) return verdict;
    const { tool, args = {}, platform: agent } = call;
    const { action: decision, reason } = verdict;
    const decided = { event: PRE_TOOL_CALL, agent, tool, args, decision, reason, plugin: by };
    recordDecision({ ...decided, startedAt }, this.#runner.log);
    return verdict;
  }

  // The verdict, and who decided (`by`: the hooks, comma-separated; "" for tyhooks itself;
  // undefined when there was no hook to ask).
  async #judge(call: ToolCall, options: PreToolOptions): Promise<ToolVerdict & { by?: string }> {
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
        return { action: "block", reason: `${failed} (failure policy: block)`, by: "" };
      }
    }
    const handlers: ConsultHandler[] = [
      ...this.#pre.map((script) => ({
        plugin: null,
        script,
        timeoutMs: runner.timeoutFor(PRE_TOOL_CALL, null),
      })),
      ...(await this.#plugins(PRE_TOOL_CALL, call.tool)).map((plugin) => ({
        plugin,
        script: plugin.hooks[PRE_TOOL_CALL],
        timeoutMs: runner.timeoutFor(PRE_TOOL_CALL, plugin),
      })),
    ];
    if (handlers.length === 0) return { action: "allow", reason: "" };
    const decided = await consult<PreOutcome>(runner, {
      event: PRE_TOOL_CALL,
      handlers,
      stdin: JSON.stringify(request(PRE_TOOL_CALL, call)) + "\n",
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
        return { action: "block", reason, by: who(handler) };
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
        return { action: "block", reason: `${failed} (failure policy: block)`, by: who(handler) };
      }
      log.log("warn", `${failed}; allowed by the failure policy`, fields);
      allowReason ||= `${failed} (failure policy: allow)`;
    }
    return {
      action: "allow",
      reason: allowReason,
      by: decided.map((d) => who(d.handler)).join(","),
    };
  }

  /**
   * Tells every post hook about a finished call, all at once: fire-and-forget (failures are
   * logged, never returned as errors). The request carries `result`, and `error` only when
   * there is one. Resolves with the records when every hook has ended; never rejects.
   */
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
  async #plugins(event: string, tool: string): Promise<Plugin[]> {
    const plugins = this.#runner.handlers(event);
    const asked = await Promise.all(
      plugins.map((plugin) => toolMatches(hookSettings(plugin, event), tool)),
    );
    return plugins.filter((_, i) => asked[i]);
  }
}

// Who a decision names: the plugin, or the explicit script.
function who(handler: ConsultHandler): string {
  return handler.plugin?.name ?? handler.script;
}

function request(hook: ToolHookRequest["hook"], call: PostToolCall): ToolHookRequest {
  return {
    hook,
    tool: call.tool,
    args: call.args ?? {},
    ...(hook === POST_TOOL_CALL ? { result: call.result ?? "" } : {}),
    ...(hook === POST_TOOL_CALL && call.error ? { error: call.error } : {}),
    platform: call.platform ?? "",
    user_id: call.user_id ?? "",
  };
}

/** The meaning of one pre hook's run: allow, block, or a failure the failure policy decides. */
export type PreOutcome =
  | { kind: "allow" | "block"; reason: string }
  | { kind: "failure"; reason: string };

/** Exit code by which a pre hook blocks, its stderr being the reason. */
export const BLOCK_EXIT_CODE = 2;

/**
 * Reads a pre hook's run: exit 0 with empty stdout allows; exit 0 with a JSON answer says allow
 * or block; exit 2 blocks with stderr (trimmed) as the reason; anything else (start failure,
 * timeout, signal, another exit code, malformed JSON, unknown action) is a failure, worded with
 * the timeout it ran under.
 */
export function judgePreRun(result: RunResult, timeoutMs: number): PreOutcome {
  if (result.error === null && !result.timed_out && result.exit_code === BLOCK_EXIT_CODE) {
    return { kind: "block", reason: result.stderr.trim() };
  }
  if (!succeeded(result)) {
    return { kind: "failure", reason: failureReason(result, timeoutMs) };
  }
  if (result.stdout.trim() === "") return { kind: "allow", reason: "" };
  const parsed = parseAnswer(PreToolAnswerSchema, result.stdout);
  if (!parsed.ok) return { kind: "failure", reason: parsed.error };
  return { kind: parsed.answer.action, reason: parsed.answer.reason };
}

// Guards fail closed on load failures too (SPEC, "Trust boundaries"): a hook that could not be
// loaded is not "no hook configured". A guard is lost unless the plugin's manifest shows it was
// not there. Only the loader's warnings are looked at, so a clean load costs nothing.

/**
 * Why the index may lack a hook for `event` (default `pre_tool_call`) that it should have, or
 * null when none can be missing. One may be missing when the plugins dir or a folder below it
 * could not be read (a link leading nowhere included), or when a plugin was skipped or had an
 * entry dropped, unless its manifest parses to a map whose `hooks` is a map (or absent) without
 * `event` and that has no `event` key beside `hooks` either, or the plugin was loaded with its
 * `event` hook. Requires `--allow-read`.
 */
export function lostGuard(
  index: PluginIndex,
  event: string = PRE_TOOL_CALL,
): Promise<string | null> {
  // Once per index and event: the daemon asks for every tool call over the same snapshot.
  let byEvent = judged.get(index);
  if (byEvent === undefined) judged.set(index, byEvent = new Map());
  let found = byEvent.get(event);
  if (found === undefined) {
    found = judgeLoad(index, event);
    byEvent.set(event, found);
  }
  return found;
}

const judged = new WeakMap<PluginIndex, Map<string, Promise<string | null>>>();

// Event -> plugin dirs seen with a hook for it by this process. A daemon reloading while a
// manifest is half written may read a prefix that parses and has no `hooks` yet: the plugin had
// the hook a moment ago, so its warning still means a lost guard.
const guardedBefore = new Map<string, Set<string>>();

async function judgeLoad(index: PluginIndex, event: string): Promise<string | null> {
  const loaded = new Set(
    index.plugins.filter((p) => Object.hasOwn(p.hooks, event)).map((p) => p.dir),
  );
  let before = guardedBefore.get(event);
  if (before === undefined) guardedBefore.set(event, before = new Set());
  for (const dir of loaded) before.add(dir);
  if (index.warnings.length === 0) return null;
  // The first warning of each plugin dir: every plugin warning is about its manifest.
  const warned = new Map<string, LoadWarning>();
  for (const warning of index.warnings) {
    // The loader's warnings about the plugins dir itself: it could not be listed (whole).
    if (warning.path === index.dir) {
      return `the plugins dir "${index.dir}" could not be read: ${warning.message}`;
    }
    // Discovery's other warnings: a folder below it could not be looked into.
    if (basename(warning.path) !== "plugin.yaml") {
      return `a folder of the plugins dir could not be read, and may hold a ${event} hook: ${warning.message}`;
    }
    const dir = dirname(warning.path);
    if (!warned.has(dir)) warned.set(dir, warning);
  }
  for (const [dir, warning] of warned) {
    const declared = await declares(warning.path, event);
    if (declared === "no" || (declared === "no hooks" && !before.has(dir))) continue;
    if (declared === "yes" && loaded.has(dir)) continue;
    const plugin = `the plugin in "${dir}"`;
    const why = {
      unreadable: `the manifest of ${plugin} could not be read, so it may declare ${event}`,
      "not a map": `the manifest of ${plugin} is not a map, so it may declare ${event}`,
      "hooks not a map":
        `the "hooks" of ${plugin} is not a map (an indentation slip?), so it may declare ${event}`,
      yes: `a plugin in "${dir}" that declares ${event} was not loaded with it`,
      "no hooks":
        `${plugin} had a ${event} hook when last loaded, and its manifest has no "hooks" now`,
    }[declared];
    return `${why}: ${warning.message}`;
  }
  return null;
}

/**
 * Whether the manifest at `path`, read as the loader reads it, declares a hook for `event`: "yes"
 * (under `hooks`, or beside it), "no" (a map whose `hooks` is a map without it), "no hooks" (a map
 * without `hooks`); otherwise why it cannot tell (whatever does not decode or parse as the loader
 * reads it is "unreadable").
 */
async function declares(
  path: string,
  event: string,
): Promise<"yes" | "no" | "no hooks" | "unreadable" | "not a map" | "hooks not a map"> {
  const { readManifest } = await import("../plugins/read_manifest.ts");
  const read = await readManifest(path);
  if (!read.ok) return "unreadable";
  const data = read.lenient;
  if (!isRecord(data)) return "not a map";
  const hooks = data.hooks;
  if (Object.hasOwn(data, "hooks") && !isRecord(hooks)) return "hooks not a map";
  // Written beside `hooks:` rather than under it, it was meant as a hook all the same.
  if (Object.hasOwn(data, event)) return "yes";
  if (!isRecord(hooks)) return "no hooks";
  return Object.hasOwn(hooks, event) ? "yes" : "no";
}

// The wire formats: the call a host asks about, what a hook reads on stdin, and what a
// `pre_tool_call` hook answers.

/**
 * A tool call as a host describes it: every field but `tool` may be left out (`ToolCallSchema`
 * fills in the defaults).
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
}

/** A `pre_tool_call` hook's answer, as read. */
export interface PreToolAnswer {
  /** The verdict, trimmed and lower-cased from what the hook printed. */
  action: "allow" | "block";
  /** Why, trimmed; `""` when the hook gave no reason. */
  reason: string;
}

const call = {
  tool: string({ nonEmpty: true }),
  args: orDefault(unknown(), {}),
  platform: orDefault(string(), ""),
  user_id: orDefault(string(), ""),
};
/** A tool call as a host describes it (`POST /v1/tool/pre`); reading fills in the defaults. */
export const ToolCallSchema = object(call);
true satisfies Same<Infer<typeof ToolCallSchema>, Required<ToolCall>>;

/** A finished tool call (`POST /v1/tool/post`); reading fills in the defaults. */
export const PostToolCallSchema = object({
  ...call,
  result: orDefault(string(), ""),
  error: orDefault(string(), ""),
});
true satisfies Same<Infer<typeof PostToolCallSchema>, Required<PostToolCall>>;

const toolHookRequest = object({
  hook: oneOf([PRE_TOOL_CALL, POST_TOOL_CALL]),
  tool: string(),
  args: unknown(),
  result: optional(string()),
  error: optional(string()),
  platform: string(),
  user_id: string(),
});
true satisfies Same<Infer<typeof toolHookRequest>, ToolHookRequest>;

/** The request a `pre_tool_call` or `post_tool_call` hook reads on stdin. */
export const ToolHookRequestSchema: Schema<ToolHookRequest> = toolHookRequest;

// The action is trimmed and lower-cased first: an answer meaning "Block" must never pass as a
// failure that the `allow` policy would let through.
const preToolAnswer = object({
  action: oneOf(["allow", "block"], (action) => action.trim().toLowerCase()),
  reason: orDefault(string({ trim: true }), "", { orNull: true }),
});
true satisfies Same<Infer<typeof preToolAnswer>, PreToolAnswer>;

/** A `pre_tool_call` hook's answer; the action is trimmed and lower-cased first. */
export const PreToolAnswerSchema: Schema<PreToolAnswer> = preToolAnswer;
