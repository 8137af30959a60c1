/**
 * `task.placement`: on which host a task runs, asked of the placement handlers in turn.
 *
 * @module
 */

import type { Runner } from "../hooks/runner.ts";
import { type ConsultOptions, notAskedReason, startDeadline } from "../hooks/consult_deadline.ts";
import { failureReason, succeeded } from "../process/record.ts";
import { EMPTY_TASK, taskEnv } from "../task.ts";
import type { PlacementAnswer, PlacementRequest } from "./placement_schema.ts";
import { readPlacementAnswer } from "./placement_answer.ts";

/**
 * The event placement handlers handle.
 *
 * @example
 * ```ts
 * import { PLACEMENT_EVENT } from "./placement.ts";
 * console.assert(PLACEMENT_EVENT === "task.placement");
 * ```
 */
export const PLACEMENT_EVENT = "task.placement";

/**
 * What a placement question is about, and what a handler reads as the request's `task`: a whole
 * `Task` will do (only these fields are sent).
 *
 * @example
 * ```ts
 * import type { PlacementInfo } from "./placement.ts";
 * const info: PlacementInfo = {
 *   id: 42,
 *   title: "Train the model",
 *   project: "ml",
 *   repo_path: "/src/ml",
 *   executor: "claude",
 *   remote_required: true,
 * };
 * console.assert(info.remote_required);
 * ```
 */
export interface PlacementInfo {
  /** The task's id. */
  id: number;
  /** The task's title. */
  title: string;
  /** The task's project. */
  project: string;
  /** The repository the task works on. */
  repo_path: string;
  /** The agent that runs it, e.g. `claude`. */
  executor: string;
  /** The task must run on a remote host (sent to handlers only when true). */
  remote_required?: boolean;
}

/**
 * The placement (`place` prints exactly this).
 *
 * @example
 * ```ts
 * import type { Placement } from "./placement.ts";
 * const remote: Placement = {
 *   target: "gpu-1",
 *   workdir: "~/src/ml",
 *   reason: "most free memory: 12.3 GiB of 31.2 GiB",
 *   handler: "fleet-placement",
 * };
 * console.assert(remote.target !== "");
 * ```
 */
export interface Placement {
  /** The host; `""` = run locally. */
  target: string;
  /** A path on the target host, as the handler gave it (a leading `~` is left alone). */
  workdir: string;
  /** Why, in words a person can read; may be empty. */
  reason: string;
  /** The plugin whose answer this is; `""` when no handler answered. */
  handler: string;
}

/**
 * The answer when no handler answered: run locally.
 *
 * @example
 * ```ts
 * import { LOCAL_PLACEMENT } from "./placement.ts";
 * console.assert(LOCAL_PLACEMENT.target === "" && LOCAL_PLACEMENT.handler === "");
 * ```
 */
export const LOCAL_PLACEMENT: Readonly<Placement> = Object.freeze({
  target: "",
  workdir: "",
  reason: "",
  handler: "",
});

/**
 * Asks every plugin handling `task.placement`, one after another in name order. The request
 * `{"event":"task.placement","task":{...}}` goes to stdin; the answer `{"target","workdir",
 * "reason"}` is read from stdout (empty stdout = local). The first non-empty target wins; the
 * first deliberate local answer (JSON with an empty target) is returned when nobody names a
 * target. A timeout, crash, non-zero exit, malformed JSON or wrong type is logged at error level
 * with the handler's name and counts as local. Never rejects.
 *
 * Requires `--allow-run`, `--allow-read`, `--allow-env`.
 *
 * @param runner The runner (plugin index, placement timeout, grace, logger, abort signal).
 * @param info The task fields sent, and `remote_required`.
 * @param options `deadlineMs`: bound on the whole call; default the placement timeout (5 s).
 * @returns The placement, or {@linkcode LOCAL_PLACEMENT}.
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { EMPTY_TASK } from "../task.ts";
 * import { resolvePlacement } from "./placement.ts";
 * const runner = new Runner({ dir: "/none", plugins: [], warnings: [] });
 * const placed = await resolvePlacement(runner, { ...EMPTY_TASK, id: 4 });
 * console.assert(placed.target === "" && placed.handler === "");
 * ```
 */
export async function resolvePlacement(
  runner: Runner,
  info: PlacementInfo,
  options: ConsultOptions = {},
): Promise<Placement> {
  const handlers = runner.handlers(PLACEMENT_EVENT);
  if (handlers.length === 0) return { ...LOCAL_PLACEMENT };
  const task = { ...EMPTY_TASK, ...info };
  const stdin = JSON.stringify(placementRequest(info));
  const env = taskEnv(task, { event: PLACEMENT_EVENT });
  const timeoutMs = runner.timeouts.placement;
  const deadline = startDeadline(options.deadlineMs ?? timeoutMs);
  const fail = (name: string, reason: string, fields: Record<string, unknown> = {}) =>
    runner.log.log("error", `Placement handler "${name}" failed: ${reason}; treated as local`, {
      plugin: name,
      ...fields,
    });
  let local: Placement | undefined;
  for (const [i, plugin] of handlers.entries()) {
    const budget = deadline.next(timeoutMs, runner.graceMs);
    if (budget === null) {
      for (const late of handlers.slice(i)) fail(late.name, notAskedReason(deadline));
      break;
    }
    const result = await runner.runHook(plugin, PLACEMENT_EVENT, { env, stdin, ...budget });
    if (!succeeded(result)) {
      fail(plugin.name, failureReason(result, budget.timeoutMs), {
        stderr: result.stderr.trim().slice(0, 500) || undefined,
      });
      continue;
    }
    if (result.stdout.trim() === "") continue;
    const parsed = await readPlacementAnswer(result.stdout);
    if (!parsed.ok) {
      fail(plugin.name, parsed.error, { stdout: result.stdout.trim().slice(0, 500) });
      continue;
    }
    const answer: PlacementAnswer = parsed.answer;
    if (answer.target !== "") return { ...answer, handler: plugin.name };
    local ??= { ...answer, handler: plugin.name };
  }
  return local ?? { ...LOCAL_PLACEMENT };
}

// Only the fields SPEC lists: a placement handler must not learn the task body by accident.
function placementRequest(info: PlacementInfo): PlacementRequest {
  return {
    event: PLACEMENT_EVENT,
    task: {
      id: info.id,
      title: info.title,
      project: info.project,
      repo_path: info.repo_path,
      executor: info.executor,
      ...(info.remote_required ? { remote_required: true } : {}),
    },
  };
}
