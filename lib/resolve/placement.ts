/**
 * `task.placement`: on which host a task runs, asked of the placement handlers in turn.
 *
 * @module
 */

import {
  consult,
  type ConsultOptions,
  type ConsultRunner,
  pluginHandlers,
} from "../consult/consult.ts";
import { failureReason, succeeded } from "../process/record.ts";
import { EMPTY_TASK, taskEnv } from "../task.ts";
import type { PlacementAnswer, PlacementRequest } from "./placement_schema.ts";
import { readPlacementAnswer } from "./placement_answer.ts";

/**
 * The event placement handlers handle.
 */
export const PLACEMENT_EVENT = "task.placement";

/**
 * What a placement question is about, and what a handler reads as the request's `task`: a whole
 * `Task` will do (only these fields are sent).
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
 */
export const LOCAL_PLACEMENT: Readonly<Placement> = Object.freeze({
  target: "",
  workdir: "",
  reason: "",
  handler: "",
});

/**
 * Asks the plugins handling `task.placement`, decided in name order through the consult loop.
 * The request `{"event":"task.placement","task":{...}}` goes to stdin; the answer `{"target",
 * "workdir","reason"}` is read from stdout as Go's `encoding/json` reads it (keys in any case,
 * `null` as empty). The first non-empty target wins. Exit 0 with empty stdout, or an answer with
 * an empty target, is a deliberate local answer, as in ty: the first one is returned, naming its
 * handler, when nobody names a target. A timeout, crash, non-zero exit, malformed JSON or wrong
 * type is logged at error level with the handler's name and counts as local. Never rejects.
 *
 * Requires `--allow-run`, `--allow-read`, `--allow-env`.
 *
 * @param runner The runner (plugin index, placement timeout, grace, logger, abort signal).
 * @param info The task fields sent, and `remote_required`.
 * @param options `deadlineMs` and `sequential` (see the consult loop).
 * @returns The placement, or {@linkcode LOCAL_PLACEMENT}.
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { EMPTY_TASK } from "../task.ts";
 * import { resolvePlacement } from "./placement.ts";
 * const runner = new Runner({ dir: "/none", plugins: [], warnings: [] });
 * const placed = await resolvePlacement(runner, { ...EMPTY_TASK, id: 4 });
 * if (placed.target !== "" || placed.handler !== "") throw new Error("no handler: local");
 * ```
 */
export async function resolvePlacement(
  runner: ConsultRunner,
  info: PlacementInfo,
  options: ConsultOptions = {},
): Promise<Placement> {
  const handlers = pluginHandlers(runner, PLACEMENT_EVENT);
  if (handlers.length === 0) return { ...LOCAL_PLACEMENT };
  const task = { ...EMPTY_TASK, ...info };
  const decided = await consult<PlacementMeaning>(runner, {
    event: PLACEMENT_EVENT,
    handlers,
    stdin: JSON.stringify(placementRequest(info)) + "\n",
    env: taskEnv(task, { event: PLACEMENT_EVENT }),
    async read(answer) {
      if (!answer.ran) return { failure: answer.reason };
      const { result } = answer;
      if (!succeeded(result)) {
        const stderr = result.stderr.trim().slice(0, 500) || undefined;
        return { failure: failureReason(result, answer.timeoutMs), stderr };
      }
      // Silence is a deliberate "run locally" (ty: an empty target by another spelling).
      if (result.stdout.trim() === "") return { answer: { target: "", workdir: "", reason: "" } };
      const parsed = await readPlacementAnswer(result.stdout);
      if (!parsed.ok) return { failure: parsed.error, stdout: result.stdout.trim().slice(0, 500) };
      return { answer: parsed.answer };
    },
    settles: (meaning) => meaning.answer !== undefined && meaning.answer.target !== "",
  }, options);
  let local: Placement | undefined;
  for (const { handler, meaning } of decided) {
    const name = handler.plugin!.name;
    if (meaning.answer === undefined) {
      runner.log.log(
        "error",
        `Placement handler "${name}" failed: ${meaning.failure}; treated as local`,
        { plugin: name, stderr: meaning.stderr, stdout: meaning.stdout },
      );
      continue;
    }
    if (meaning.answer.target !== "") return { ...meaning.answer, handler: name };
    local ??= { ...meaning.answer, handler: name };
  }
  return local ?? { ...LOCAL_PLACEMENT };
}

/** What one placement handler's run meant: an answer, or why there is none. */
interface PlacementMeaning {
  answer?: PlacementAnswer;
  failure?: string;
  stderr?: string;
  stdout?: string;
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
