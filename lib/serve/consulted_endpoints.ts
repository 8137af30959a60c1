/**
 * The endpoints a caller waits on: `POST /v1/route`, `POST /v1/placement`, `POST /v1/hosts`,
 * `POST /v1/tool/pre`
 * and `POST /v1/actions/{plugin}/{action}`. Each is one library call over the request's
 * snapshot; the answer is the document the matching command prints with `--json`.
 *
 * @module
 */

import { EMPTY_TASK } from "../task.ts";
import { UsageError } from "../errors.ts";
import { toRecord } from "../process/record.ts";
import type { Call } from "./context.ts";
import { HttpError, json } from "./http.ts";
import { parseBody } from "./body.ts";
import { lazy } from "./_lazy.ts";

const schemas = lazy(() => import("./schemas.ts"));

/**
 * `POST /v1/route` `{"task"?}` -> the `route --json` document
 * `{"plugin","claude_config_dir","hold","reason"}` (`plugin` is `""` when nobody decided).
 *
 * @example
 * ```ts
 * import { route } from "./consulted_endpoints.ts";
 * console.assert(typeof route === "function");
 * ```
 */
export async function route(call: Call): Promise<Response> {
  const body = await parseBody(call.request, (await schemas()).TaskBodySchema);
  const decision = await call.snapshot.built.decide.route(body.task ?? EMPTY_TASK);
  return json(200, {
    plugin: decision.plugin,
    claude_config_dir: decision.claude_config_dir,
    hold: decision.hold,
    reason: decision.reason,
  });
}

/**
 * `POST /v1/placement` `{"task"?,"remote_required"?}` -> the `place` document
 * `{"target","workdir","reason","handler"}`. No target is an answer here (run locally), not an
 * error: the caller reads `target`.
 *
 * @example
 * ```ts
 * import { placement } from "./consulted_endpoints.ts";
 * console.assert(typeof placement === "function");
 * ```
 */
export async function placement(call: Call): Promise<Response> {
  const body = await parseBody(call.request, (await schemas()).PlacementBodySchema);
  const answer = await call.snapshot.built.decide.resolvePlacement({
    ...(body.task ?? EMPTY_TASK),
    remote_required: body.remote_required,
  });
  return json(200, {
    target: answer.target,
    workdir: answer.workdir,
    reason: answer.reason,
    handler: answer.handler,
  });
}

/**
 * `POST /v1/hosts` `{"task"?}` -> the `hosts` document `{"hosts":[{"name","target","workdir",
 * "detail"}]}`: every `task.hosts` handler's candidates, merged.
 */
export async function hosts(call: Call): Promise<Response> {
  const body = await parseBody(call.request, (await schemas()).TaskBodySchema);
  const list = await call.snapshot.built.decide.listHosts(body.task ?? EMPTY_TASK);
  return json(200, { hosts: list.hosts });
}

/**
 * `POST /v1/actions/{plugin}/{action}` `{"task"?}` -> the `plugins run --json` record (the run
 * record plus `stdout` and `stderr`), whatever the action's exit code; 404 for an unknown plugin
 * or action.
 *
 * @example
 * ```ts
 * import { runAction } from "./consulted_endpoints.ts";
 * console.assert(typeof runAction === "function");
 * ```
 */
export async function runAction(call: Call): Promise<Response> {
  const body = await parseBody(call.request, (await schemas()).TaskBodySchema);
  const { plugin, action } = call.params;
  try {
    const result = await call.snapshot.built.act.runAction(plugin, action, body.task);
    return json(200, { ...toRecord(result), stdout: result.stdout, stderr: result.stderr });
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    const hint = error.hint ? ` (${error.hint})` : "";
    throw new HttpError(404, `${error.message}${hint}`);
  }
}
