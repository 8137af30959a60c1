/**
 * The tool-call endpoints: `POST /v1/tool/pre` asks the `pre_tool_call` hooks (a caller waits:
 * consulted), `POST /v1/tool/post` tells the `post_tool_call` hooks (fire-and-forget, queued).
 * The bodies are the tool-call wire format of `lib/wire/tool.ts`.
 *
 * @module
 */

import type { Call } from "./context.ts";
import { HttpError, json } from "./http.ts";
import { parseBody, parseSizedBody } from "./body.ts";
import { lazy } from "./_lazy.ts";

const toolcalls = lazy(async () => ({
  ...(await import("../wire/tool.ts")),
  ...(await import("../consult/tool_hooks.ts")),
}));

/**
 * `POST /v1/tool/pre` `{"tool","args"?,"platform"?,"user_id"?}` -> `{"action","reason"}`.
 * Failing hooks follow the default policy (block).
 *
 * @example
 * ```ts
 * import { toolPre } from "./tool_endpoints.ts";
 * console.assert(typeof toolPre === "function");
 * ```
 */
export async function toolPre(call: Call): Promise<Response> {
  const { ToolCallSchema, ToolHooks } = await toolcalls();
  const body = await parseBody(call.request, ToolCallSchema);
  const verdict = await new ToolHooks(call.snapshot.built.decide).preToolCall(body);
  return json(200, { action: verdict.action, reason: verdict.reason });
}

/**
 * `POST /v1/tool/post` `{"tool","args"?,"result"?,"error"?,"platform"?,"user_id"?}` -> 202
 * `{"accepted":true}`; the hooks run from the event queue.
 *
 * @example
 * ```ts
 * import { toolPost } from "./tool_endpoints.ts";
 * console.assert(typeof toolPost === "function");
 * ```
 */
export async function toolPost(call: Call): Promise<Response> {
  const { PostToolCallSchema, ToolHooks } = await toolcalls();
  const { body, bytes } = await parseSizedBody(call.request, PostToolCallSchema);
  const hooks = new ToolHooks(call.snapshot.built.fire);
  const done = call.daemon.events.submit("post_tool_call", () => hooks.postToolCall(body), bytes);
  if (done === null) throw new HttpError(503, 'Dropped "post_tool_call": the event queue is full');
  done.catch((error) => call.daemon.log.log("warn", (error as Error).message));
  return json(202, { accepted: true });
}
