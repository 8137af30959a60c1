/**
 * `task.route`: which profile (`CLAUDE_CONFIG_DIR`) a task runs under, or whether it waits.
 *
 * @module
 */

import type { Runner } from "../hooks/runner.ts";
import { type ConsultOptions, notAskedReason, startDeadline } from "../hooks/consult_deadline.ts";
import { failureReason, succeeded } from "../process/record.ts";
import { type Task, taskEnv } from "../task.ts";
import { isEmptyDecision, parseRouteOutput, type RouteDecision } from "./route_output.ts";

/**
 * The event routers handle.
 *
 * @example
 * ```ts
 * import { ROUTE_EVENT } from "./route.ts";
 * console.assert(ROUTE_EVENT === "task.route");
 * ```
 */
export const ROUTE_EVENT = "task.route";

/**
 * A routing decision and the plugin that made it (`route --json` prints exactly this).
 *
 * @example
 * ```ts
 * import type { RouteResult } from "./route.ts";
 * const held: RouteResult = {
 *   plugin: "quota-router",
 *   claude_config_dir: "",
 *   hold: true,
 *   reason: "all profiles over quota",
 * };
 * console.assert(held.hold && held.plugin !== "");
 * ```
 */
export interface RouteResult extends RouteDecision {
  /** The deciding plugin; `""` when no router decided. */
  plugin: string;
}

/**
 * The answer when no router decided: start the task as it is.
 *
 * @example
 * ```ts
 * import { NO_ROUTE } from "./route.ts";
 * console.assert(NO_ROUTE.plugin === "" && !NO_ROUTE.hold);
 * ```
 */
export const NO_ROUTE: Readonly<RouteResult> = Object.freeze({
  plugin: "",
  claude_config_dir: "",
  hold: false,
  reason: "",
});

/**
 * Asks every plugin handling `task.route`, one after another in name order, and returns the
 * first non-empty decision (one that holds or names a config dir). A router that exits non-zero,
 * times out or cannot start is logged as a warning and skipped, whatever it printed; its stderr
 * is only ever logged. Routers get the event hook environment plus `TASK_EXECUTOR` and
 * `TASK_CLAUDE_CONFIG_DIR`. Never rejects.
 *
 * Requires `--allow-run`, `--allow-read`, `--allow-env`.
 *
 * @param runner The runner (plugin index, route timeout, grace, logger, abort signal).
 * @param task The task.
 * @param options `deadlineMs`: bound on the whole call; default the route timeout (15 s).
 * @returns The decision, or {@linkcode NO_ROUTE}.
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { EMPTY_TASK } from "../task.ts";
 * import { route } from "./route.ts";
 * const runner = new Runner({ dir: "/none", plugins: [], warnings: [] });
 * const decision = await route(runner, { ...EMPTY_TASK, id: 4 });
 * console.assert(decision.plugin === "");
 * ```
 */
export async function route(
  runner: Runner,
  task: Task,
  options: ConsultOptions = {},
): Promise<RouteResult> {
  const routers = runner.handlers(ROUTE_EVENT);
  if (routers.length === 0) return { ...NO_ROUTE };
  const timeoutMs = runner.timeouts.route;
  const deadline = startDeadline(options.deadlineMs ?? timeoutMs);
  const env = taskEnv(task, { event: ROUTE_EVENT, route: true });
  for (const [i, plugin] of routers.entries()) {
    const budget = deadline.next(timeoutMs, runner.graceMs);
    if (budget === null) {
      for (const late of routers.slice(i)) {
        runner.log.log("warn", `Router "${late.name}" skipped: ${notAskedReason(deadline)}`, {
          plugin: late.name,
        });
      }
      break;
    }
    const result = await runner.runHook(plugin, ROUTE_EVENT, { env, ...budget });
    const stderr = result.stderr.trim().slice(0, 500) || undefined;
    if (!succeeded(result)) {
      runner.log.log(
        "warn",
        `Router "${plugin.name}" skipped: ${failureReason(result, budget.timeoutMs)}`,
        { plugin: plugin.name, script: result.script, stderr },
      );
      continue;
    }
    if (stderr) runner.log.log("debug", `Router "${plugin.name}" said`, { stderr });
    const decision = parseRouteOutput(result.stdout);
    if (!isEmptyDecision(decision)) return { plugin: plugin.name, ...decision };
  }
  return { ...NO_ROUTE };
}
