/**
 * The fire-and-forget endpoints: `POST /v1/events/{event}`, `POST /v1/status-change` and
 * `POST /v1/tool/post`. The body is validated first (400 before anything is queued); then the
 * work goes to the bounded event queue and the answer is 202 `{"accepted":true}`. With
 * `?wait=1`, events and status changes answer 200 with `{"event","runs"}` once the hooks ran.
 * A full queue (or a stopping daemon) answers 503: the work was dropped, and the log counts it.
 *
 * @module
 */

import { EMPTY_TASK } from "../task.ts";
import type { RunRecord } from "../process/record.ts";
import type { Call } from "./context.ts";
import { HttpError, json } from "./http.ts";
import { parseSizedBody } from "./body.ts";
import { lazy } from "./_lazy.ts";
import { StopDrop } from "./limits.ts";

const schemas = lazy(() => import("./schemas.ts"));

function wantsWait(url: URL): boolean {
  const wait = url.searchParams.get("wait");
  return wait === "1" || wait === "true" || wait === "yes";
}

/** Queues `job`; answers 202 at once, or 200 with its result when the caller waits. */
async function enqueue(
  call: Call,
  what: string,
  job: () => Promise<unknown>,
  bytes: number,
): Promise<Response> {
  const wait = wantsWait(call.url);
  const done = call.daemon.events.submit(what, job, bytes);
  if (done === null) throw new HttpError(503, `Dropped "${what}": the event queue is full`);
  if (!wait) {
    done.catch((error) => {
      // Jobs dropped at stop are counted in one line by the queue, not one line each.
      const level = error instanceof StopDrop ? "debug" : "warn";
      call.daemon.log.log(level, (error as Error).message);
    });
    return json(202, { accepted: true });
  }
  try {
    return json(200, await done);
  } catch (error) {
    throw new HttpError(503, (error as Error).message);
  }
}

/**
 * `POST /v1/events/{event}` `{"task"?,"message"?}` -> 202 `{"accepted":true}`; with `?wait=1`,
 * 200 and the `fire --json` document `{"event","runs"}`.
 *
 * @example
 * ```ts
 * import { fireEvent } from "./event_endpoints.ts";
 * console.assert(typeof fireEvent === "function");
 * ```
 */
export async function fireEvent(call: Call): Promise<Response> {
  const { body, bytes } = await parseSizedBody(call.request, (await schemas()).EventBodySchema);
  const event = call.params.event;
  const runner = call.snapshot.built.fire;
  return await enqueue(call, event, async () => ({
    event,
    runs: await runner.fire(event, body.task ?? EMPTY_TASK, body.message),
  }), bytes);
}

/**
 * `POST /v1/status-change` `{"task"?,"status","message"?}` -> like events; `event` is `""` when
 * the status fires nothing.
 *
 * @example
 * ```ts
 * import { statusChange } from "./event_endpoints.ts";
 * console.assert(typeof statusChange === "function");
 * ```
 */
export async function statusChange(call: Call): Promise<Response> {
  const { body, bytes } = await parseSizedBody(
    call.request,
    (await schemas()).StatusChangeBodySchema,
  );
  const runner = call.snapshot.built.fire;
  return await enqueue(call, `status ${body.status}`, async () => {
    const result = await runner.onStatusChange(body.task ?? EMPTY_TASK, body.status, body.message);
    return { event: result.event ?? "", runs: result.runs satisfies RunRecord[] };
  }, bytes);
}
