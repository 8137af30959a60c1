/**
 * The guards, hooks whose answer decides whether something may go on (`pre_tool_call`, an agent's
 * `agent.prompt` and `agent.stop`): what a guard answers and its one reader, what one run means,
 * how the guards of a call decide together, and the guards a failed load lost.
 *
 * @module
 */

import {
  consult,
  type ConsultHandler,
  type ConsultOptions,
  type ConsultRunner,
  readJsonAnswer,
} from "./consult.ts";
import type { RunResult } from "../process/run_script.ts";
import type { LogFields, Logger } from "../log.ts";
import type { LoadWarning, PluginIndex } from "../plugins/types.ts";
import { basename, dirname } from "../paths.ts";
import {
  boolean,
  goFold,
  type Infer,
  isRecord,
  object,
  oneOf,
  optional,
  orDefault,
  reader,
  record,
  type Same,
  type Schema,
  string,
} from "../wire/json.ts";
import { PRE_TOOL_CALL } from "../events.ts";
import { excerpt } from "../text.ts";

/** What a failing guard (timeout, crash, bad answer) means: `block` (fail closed) or `allow`. */
export type FailurePolicy = "block" | "allow";

/** A guard's answer (a `pre_tool_call`, `agent.prompt` or `agent.stop` hook's), as read. */
export interface PreToolAnswer {
  /** The verdict, trimmed and lower-cased from what the hook printed. */
  action: "allow" | "block" | "ask";
  /** Why, trimmed; `""` when the hook gave no reason. */
  reason: string;
  /** The tool input to run instead (with allow or ask). */
  args?: Record<string, unknown>;
  /** Text for the model. */
  context?: string;
}

// Actions are trimmed and lower-cased first: an answer meaning "Block" must never pass as a
// failure that the `allow` policy would let through. A null reads as left out, as Go reads it.
const lower = (text: string) => text.trim().toLowerCase();
const reason = orDefault(string({ trim: true }), "", { orNull: true });

// Keys are matched as Go's encoding/json matches them, as the placement answer's are: `"Action"`
// is the action, and of `"action"` and `"ACTION"` the last one counts.
const ownAnswer = object({
  action: oneOf(["allow", "block", "ask"], lower),
  reason,
  args: optional(record(), { orNull: true }),
  context: optional(string(), { orNull: true }),
}, { go: true });
true satisfies Same<Infer<typeof ownAnswer>, PreToolAnswer>;

// A Claude Code hook's answer (migrated hooks keep printing it), with the fields that matter to
// a guard: `continue: false` stops everything, so it blocks.
const claudeAnswer = object({
  hookSpecificOutput: optional(
    object({
      permissionDecision: optional(oneOf(["allow", "deny", "ask"], lower), { orNull: true }),
      permissionDecisionReason: reason,
      updatedInput: optional(record(), { orNull: true }),
      additionalContext: optional(string(), { orNull: true }),
    }),
    { orNull: true },
  ),
  decision: optional(oneOf(["block", "approve"], lower), { orNull: true }),
  reason,
  continue: optional(boolean(), { orNull: true }),
  stopReason: reason,
});
const CLAUDE_KEYS = ["hookSpecificOutput", "decision", "continue"];
const CLAUDE_ACTION = { allow: "allow", deny: "block", ask: "ask" } as const;

const preToolAnswer = reader<PreToolAnswer>((value, path, issues) => {
  // An answer with an "action", or with none of Claude Code's keys, is tyhooks' own: one
  // without an action is then refused (naming it), never read as a silent allow.
  if (
    !isRecord(value) || Object.keys(value).some((k) => goFold(k) === "action" && value[k] !== null)
  ) {
    return ownAnswer.read(value, path, issues);
  }
  if (!CLAUDE_KEYS.some((key) => Object.hasOwn(value, key))) {
    return ownAnswer.read(value, path, issues);
  }
  const read = claudeAnswer.read(value, path, issues);
  const specific = read.hookSpecificOutput ?? { permissionDecisionReason: "" };
  const answer: PreToolAnswer = read.continue === false
    ? { action: "block", reason: read.stopReason || read.reason }
    : specific.permissionDecision !== undefined
    ? {
      action: CLAUDE_ACTION[specific.permissionDecision],
      reason: specific.permissionDecisionReason,
    }
    : read.decision === "block"
    ? { action: "block", reason: read.reason }
    : { action: "allow", reason: read.reason };
  if (specific.updatedInput !== undefined) answer.args = specific.updatedInput;
  if (specific.additionalContext !== undefined) answer.context = specific.additionalContext;
  return answer;
});

/**
 * A guard's answer: `{"action":"allow"|"block"|"ask","reason","args"?,"context"?}`, or a Claude
 * Code hook's `{"hookSpecificOutput":{"permissionDecision":"allow"|"deny"|"ask",
 * "permissionDecisionReason","updatedInput","additionalContext"}}`, or the legacy
 * `{"decision":"block"|"approve","reason"}`, read as the same answers. Actions are trimmed and
 * lower-cased first.
 */
export const PreToolAnswerSchema: Schema<PreToolAnswer> = preToolAnswer;

/** The meaning of one guard's run: its answer, or a failure the failure policy decides. */
export type GuardOutcome =
  | {
    kind: "allow" | "block" | "ask";
    reason: string;
    args?: Record<string, unknown>;
    context?: string;
  }
  | {
    kind: "failure";
    reason: string;
    /** The start of what the guard wrote on stderr, for the log. */
    stderr?: string;
  };

/** Exit code by which a guard blocks, its stderr being the reason. */
export const BLOCK_EXIT_CODE = 2;

/**
 * Reads a guard's run: exit 0 allows or says what its JSON answer says; exit 2 blocks, stderr
 * the reason; anything else is a failure, worded with the timeout it ran under.
 */
export function judgeGuardRun(result: RunResult, timeoutMs: number): GuardOutcome {
  if (result.error === null && !result.timed_out && result.exit_code === BLOCK_EXIT_CODE) {
    return { kind: "block", reason: result.stderr.trim() };
  }
  const read = readJsonAnswer(result, PreToolAnswerSchema, timeoutMs);
  if ("failure" in read) {
    return { kind: "failure", reason: read.failure, stderr: excerpt(result.stderr) };
  }
  if (read.answer === null) return { kind: "allow", reason: "" };
  const { action, ...rest } = read.answer;
  return { kind: action, ...rest };
}

/** The answer to "may this tool call run?": what the guards of one call decided. */
export interface ToolVerdict {
  /** Whether the call may run, or a person must decide (only with `canAsk`). */
  action: "allow" | "block" | "ask";
  /** Why, from the hook that decided (the first that asked, for an ask); may be empty. */
  reason: string;
  /**
   * The tool input to run instead (with allow or ask), as the guards last rewrote it: a caller
   * that cannot run it must not run the call.
   */
  args?: Record<string, unknown>;
  /** Text for the model from every guard that gave some, joined by "\n" in decision order. */
  context?: string;
  /** Who decided a block or an ask: the plugin name, or the explicit script's path. */
  by?: string;
}

/** One call to the guards of an event. */
export interface GuardCall {
  /** The event asked about (`pre_tool_call`, `agent.prompt`, `agent.stop`). */
  event: string;
  /** The guards, in decision order. */
  handlers: ConsultHandler[];
  /** The loaded index: a guard its load lost fails closed. */
  index: PluginIndex;
  /** The input the guards judge first. */
  args: unknown;
  /** The request line guards read for `args`. */
  request(args: unknown): string;
  /** Whether a guard's `args` is taken (a tool input) or ignored (a prompt, a stop). */
  rewrites: boolean;
  policy: FailurePolicy;
  /** The guards as messages name them, e.g. `pre-tool-call hook`. */
  noun: string;
  /** What is decided, as messages name it, e.g. `Tool call`. */
  subject: string;
  /** Log fields of every message, e.g. the tool. */
  fields: LogFields;
}

/**
 * Decides as `ToolHooks.preToolCall` (tool_hooks.ts) says. A guard's `args` replaces the input,
 * and the guards after it are asked again (answers for the old input dropped), so no later guard
 * judged an input that will not run. Never rejects.
 */
export async function decideGuards(
  runner: ConsultRunner,
  call: GuardCall,
  options: ConsultOptions = {},
): Promise<ToolVerdict> {
  const { log } = runner;
  const { policy, noun } = call;
  const Noun = noun[0].toUpperCase() + noun.slice(1);
  const untrusted = policy === "block" ? await lostGuardBlock(call, log) : null;
  if (untrusted !== null) return untrusted;
  // Every round of asking spends the one deadline of the call.
  const rounds = { ...options, startedAt: options.startedAt ?? performance.now() };
  let args: Record<string, unknown> | undefined;
  let asked: { reason: string; by: string } | undefined;
  let allowReason = "";
  const contexts: string[] = [];
  const joined = () => contexts.length > 0 ? { context: contexts.join("\n") } : {};
  for (let from = 0; from < call.handlers.length;) {
    const round = from;
    from = call.handlers.length;
    const decided = await consult<GuardOutcome>(runner, {
      event: call.event,
      handlers: call.handlers.slice(round),
      stdin: call.request(args ?? call.args),
      read: (answer) =>
        answer.ran
          ? judgeGuardRun(answer.result, answer.timeoutMs)
          : { kind: "failure", reason: answer.reason },
      settles: (outcome) =>
        outcome.kind === "block" || (outcome.kind === "failure" && policy === "block") ||
        (call.rewrites && outcome.kind !== "failure" && outcome.args !== undefined),
    }, rounds);
    for (const [i, { handler, meaning: outcome }] of decided.entries()) {
      const label = handler.plugin ? `of plugin "${handler.plugin.name}"` : `"${handler.script}"`;
      const by = handler.plugin?.name ?? handler.script;
      const fields = { ...call.fields, plugin: handler.plugin?.name };
      if (outcome.kind === "failure") {
        const failed = `${Noun} ${label} failed: ${outcome.reason}`;
        const said = { stderr: outcome.stderr };
        if (policy === "block") {
          log.log("error", `${failed}; blocking`, {
            ...fields,
            ...said,
            hint: "--on-failure allow lets failing hooks through",
          });
          return { action: "block", reason: `${failed} (failure policy: block)`, ...joined(), by };
        }
        log.log("warn", `${failed}; allowed by the failure policy`, { ...fields, ...said });
        allowReason ||= `${failed} (failure policy: allow)`;
        continue;
      }
      if (outcome.context) contexts.push(outcome.context);
      if (outcome.kind === "block") {
        const reason = outcome.reason || `Blocked by the ${noun} ${label}`;
        log.log("info", `${call.subject} blocked by the hook ${label}`, { ...fields, reason });
        return { action: "block", reason, ...joined(), by };
      }
      if (outcome.kind === "ask") {
        const reason = outcome.reason || `The ${noun} ${label} asks for a person's approval`;
        log.log("info", `${call.subject} needs approval, says the hook ${label}`, {
          ...fields,
          reason,
        });
        asked ??= { reason, by };
      } else {
        allowReason ||= outcome.reason;
      }
      if (outcome.args === undefined) continue;
      if (!call.rewrites) {
        const ignored = `Ignored the args of the hook ${label}: ${call.event} has no input`;
        log.log("debug", ignored, fields);
        continue;
      }
      log.log("debug", `${call.subject} input rewritten by the hook ${label}`, fields);
      args = outcome.args;
      from = round + i + 1;
      break;
    }
  }
  const rewritten = args === undefined ? {} : { args };
  if (asked !== undefined) {
    return { action: "ask", reason: asked.reason, ...rewritten, ...joined(), by: asked.by };
  }
  return { action: "allow", reason: allowReason, ...rewritten, ...joined() };
}

// Guards fail closed on load failures too (SPEC, "Trust boundaries"): a hook that could not be
// loaded is not "no hook configured". A guard is lost unless the plugin's manifest shows it was
// not there. Only the loader's warnings are looked at, so a clean load costs nothing.

/** The block of a call whose guards cannot all be trusted to be there ({@linkcode lostGuard}). */
async function lostGuardBlock(call: GuardCall, log: Logger): Promise<ToolVerdict | null> {
  const lost = await lostGuard(call.index, call.event);
  if (lost === null) return null;
  const failed = `Cannot trust the ${call.noun}s: ${lost}`;
  log.log("error", `${failed}; blocking`, {
    ...call.fields,
    hint: "fix the plugin (tyhooks plugins validate), or --on-failure allow",
  });
  return { action: "block", reason: `${failed} (failure policy: block)` };
}

/**
 * Why the index may lack a hook for `event` (default `pre_tool_call`), or null: a dir that could
 * not be read, or a plugin skipped or with an entry dropped whose manifest does not show that it
 * had no such hook. Requires `--allow-read`.
 */
export function lostGuard(
  index: PluginIndex,
  event: string = PRE_TOOL_CALL,
): Promise<string | null> {
  // Once per index and event: the daemon asks for every tool call over the same snapshot.
  let byEvent = judged.get(index);
  if (byEvent === undefined) judged.set(index, byEvent = new Map());
  let found = byEvent.get(event);
  if (found === undefined) byEvent.set(event, found = judgeLoad(index, event));
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
