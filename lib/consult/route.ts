/**
 * `task.route`: which profile (`CLAUDE_CONFIG_DIR`) a task runs under, or whether it waits. A
 * router prints `KEY=VALUE` lines, parsed exactly as ty parses them.
 *
 * @module
 */

import { normalize } from "../paths.ts";
import { excerpt, hasControl, quoted } from "../text.ts";
import { consult, type ConsultOptions, type ConsultRunner, pluginHandlers } from "./consult.ts";
import { cutAnswer, failureReason, succeeded } from "../process/run_script.ts";
import { type Task, taskEnv } from "../wire/task.ts";
import { TASK_ROUTE } from "../events.ts";
import { recordDecision } from "../log.ts";

/** A routing decision and the plugin that made it (`route --json` prints exactly this). */
export interface RouteResult extends RouteDecision {
  /** The deciding plugin; `""` when no router decided. */
  plugin: string;
}

/** The answer when no router decided: start the task as it is. */
export const NO_ROUTE: Readonly<RouteResult> = Object.freeze({
  plugin: "",
  claude_config_dir: "",
  hold: false,
  reason: "",
});

/** Options of {@linkcode route}. */
export interface RouteOptions extends ConsultOptions {
  /** Ask the routers even for a task ty's executor would not route. */
  force?: boolean;
}

/**
 * Asks the `task.route` plugins through the consult loop: the first decision that holds or names a
 * config dir, expanded as ty's executor uses it. A router that fails, or whose answer is over the
 * output cap, is logged and skipped, whatever it printed. As in ty's executor, only a task whose
 * `executor` is empty or `claude` and that names no config dir is routed (`force` asks anyway).
 * Never rejects.
 */
export async function route(
  runner: ConsultRunner,
  task: Task,
  options: RouteOptions = {},
): Promise<RouteResult> {
  const startedAt = performance.now();
  const handlers = pluginHandlers(runner, TASK_ROUTE);
  if (handlers.length === 0) return { ...NO_ROUTE };
  const unrouted = options.force ? null : whyNotRouted(task);
  if (unrouted !== null) {
    runner.log.log("debug", `Routers not asked: ${unrouted}`, { task: task.id });
    return { ...NO_ROUTE };
  }
  const decided = await consult<RouterMeaning>(runner, {
    event: TASK_ROUTE,
    handlers,
    env: taskEnv(task, { event: TASK_ROUTE, route: true }),
    read(answer) {
      if (!answer.ran) return { failure: answer.reason };
      const { result } = answer;
      const stderr = excerpt(result.stderr);
      if (!succeeded(result)) {
        return { failure: failureReason(result, answer.timeoutMs), script: result.script, stderr };
      }
      // A cut answer may have lost its HOLD or the end of its dir: never a decision.
      const cut = cutAnswer(result);
      if (cut !== null) return { failure: cut, script: result.script, stderr };
      const decision = parseRouteOutput(result.stdout);
      // A policy, not ty's: a dir named with one is never meant, and a NUL or an ESC would reach
      // the agent's environment and every log that shows it.
      if (hasControl(decision.claude_config_dir)) {
        const dir = quoted(decision.claude_config_dir);
        const failure = `its CLAUDE_CONFIG_DIR ${dir} holds a control character`;
        return { failure, script: result.script, stderr };
      }
      return { decision, stderr };
    },
    settles: (meaning) => meaning.decision !== undefined && !isEmptyDecision(meaning.decision),
  }, options);
  let result: RouteResult = { ...NO_ROUTE };
  for (const { handler, meaning } of decided) {
    const plugin = handler.plugin!.name;
    if (meaning.failure !== undefined) {
      runner.log.log("warn", `Router "${plugin}" skipped: ${meaning.failure}`, {
        plugin,
        script: meaning.script,
        stderr: meaning.stderr,
      });
      continue;
    }
    if (meaning.stderr) {
      runner.log.log("debug", `Router "${plugin}" said`, { stderr: meaning.stderr });
    }
    const decision = meaning.decision!;
    if (isEmptyDecision(decision)) continue;
    result = {
      plugin,
      ...decision,
      claude_config_dir: expandConfigDir(decision.claude_config_dir),
    };
    break;
  }
  recordDecision({
    event: TASK_ROUTE,
    task_id: task.id,
    decision: result.plugin === "" ? "none" : result.hold ? "hold" : result.claude_config_dir,
    reason: result.reason,
    plugin: result.plugin,
    startedAt,
  }, runner.log);
  return result;
}

interface RouterMeaning {
  /** Why it did not answer usably. */
  failure?: string;
  decision?: RouteDecision;
  script?: string;
  stderr?: string;
}

/** Why ty's executor would not ask the routers about `task`, or null when it would. */
export function whyNotRouted(task: Task): string | null {
  if (task.executor !== "" && task.executor !== "claude") {
    return `the task's executor is "${task.executor}", not claude (hint: --force asks anyway)`;
  }
  if (task.claude_config_dir.trim() !== "") {
    return `the task names its own config dir "${task.claude_config_dir}" (hint: --force asks anyway)`;
  }
  return null;
}

/**
 * The answered dir as ty's executor uses it: trimmed (spaces inside quotes too), a leading `~`
 * replaced by `$HOME` whatever follows it (`~bob/x` is `$HOME/bob/x`: no other user's home is
 * looked up), then cleaned.
 */
function expandConfigDir(dir: string): string {
  let path = dir.trim();
  if (path === "") return path;
  const home = Deno.env.get("HOME");
  if (home && path.startsWith("~")) path = `${home}/${path.slice(1)}`;
  const clean = normalize(path);
  return clean.length > 1 && clean.endsWith("/") ? clean.slice(0, -1) : clean;
}

/** A routing decision as one router printed it. */
export interface RouteDecision {
  /** `CLAUDE_CONFIG_DIR`: the profile the task runs under; empty when not named. */
  claude_config_dir: string;
  /** `HOLD` or `DEFER` was truthy: the task waits instead of starting. */
  hold: boolean;
  /** `REASON`: why, for people reading logs. */
  reason: string;
}

const TRUTHY = new Set(["1", "true", "yes", "y", "on"]);

/**
 * Parses a router's `KEY=VALUE` lines exactly as ty does (SPEC, "Events and the consulted hooks"):
 * keys case-insensitive, one pair of quotes stripped, the last repeat winning, `HOLD` and `DEFER`
 * one key. A router that only gives a reason has decided nothing.
 *
 * @example
 * ```ts
 * import { parseRouteOutput } from "./route.ts";
 * const d = parseRouteOutput('# pick a profile\r\nclaude_config_dir = "/p/work"\r\nReason=busy\r\n');
 * console.assert(d.claude_config_dir === "/p/work" && d.reason === "busy" && !d.hold);
 * ```
 */
export function parseRouteOutput(stdout: string): RouteDecision {
  const decision: RouteDecision = { claude_config_dir: "", hold: false, reason: "" };
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq === -1) continue;
    const key = line.slice(0, eq).trim().toUpperCase();
    const value = unquote(line.slice(eq + 1).trim());
    if (key === "CLAUDE_CONFIG_DIR") decision.claude_config_dir = value;
    // Trimmed again, as ty's isTruthy does: `HOLD=" yes "` holds.
    else if (key === "HOLD" || key === "DEFER") {
      decision.hold = TRUTHY.has(value.trim().toLowerCase());
    } else if (key === "REASON") decision.reason = value;
  }
  return decision;
}

/**
 * True when a decision neither holds the task nor names a config dir (blank counts as none, as in
 * ty): the next router is asked.
 */
export function isEmptyDecision(decision: RouteDecision): boolean {
  return !decision.hold && decision.claude_config_dir.trim() === "";
}

// One pair only: `"'x'"` keeps its inner quotes, as ty does.
function unquote(value: string): string {
  if (value.length < 2) return value;
  const first = value[0];
  if ((first === '"' || first === "'") && value.endsWith(first)) return value.slice(1, -1);
  return value;
}
