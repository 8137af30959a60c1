/**
 * The daemon's side of `POST /v1/agent/{agent}` below its handler (endpoints.ts): the request read,
 * the plugins dir checked, the answer in the form asked for.
 *
 * @module
 */

import { AGENTS, agentSpec } from "../agents/table.ts";
import {
  type AgentRequest,
  commandAnswer,
  httpAnswer,
  parseHookJson,
  readAgentRequest,
} from "../agents/hook.ts";
import type { ToolVerdict } from "../consult/tool_hooks.ts";
import type { Logger } from "../log.ts";
import { HttpError, json, readBody } from "./http.ts";
import { quoted } from "../text.ts";

/** Where a client names its plugins dir: its real path, percent-encoded as `encodeURI` does. */
export const PLUGINS_DIR_HEADER = "x-tyhooks-plugins-dir";

/** How the decision is answered: an HTTP hook's body, or the command's exit code and output. */
export type AgentForm = "http" | "command";

/** A request to `/v1/agent/{agent}`, read. */
export interface AgentCall {
  request: AgentRequest;
  /** The hook JSON, its event named (what is spooled for a notified event). */
  payload: Record<string, unknown>;
  form: AgentForm;
  /** `?deadline=MS`: the bound on the decision, from a client waiting no longer. */
  deadlineMs?: number;
}

/**
 * Reads the agent's hook JSON; `?event=NAME` is the event when it names none (as `--event`),
 * `?deadline=MS` the bound on its decision (as `--deadline`).
 */
export async function readAgentCall(request: Request, name: string): Promise<AgentCall> {
  const agent = agentSpec(name);
  if (agent === undefined) {
    const names = AGENTS.map((a) => a.name).join(", ");
    throw new HttpError(404, `Unknown agent ${quoted(name)}: expected ${names}`);
  }
  const query = new URL(request.url).searchParams;
  const form = query.get("form") ?? "http";
  if (form !== "http" && form !== "command") {
    throw new HttpError(400, `Unknown form ${quoted(form)}: expected http or command`);
  }
  const deadline = query.get("deadline");
  const deadlineMs = deadline === null ? undefined : Number(deadline);
  if (deadlineMs !== undefined && !(Number.isSafeInteger(deadlineMs) && deadlineMs >= 0)) {
    throw new HttpError(400, `Invalid deadline ${quoted(deadline!)}: expected milliseconds`);
  }
  const bytes = await readBody(request);
  try {
    const payload = parseHookJson(bytes, "the request body");
    const read = readAgentRequest(agent, payload, {
      defaultEvent: query.get("event") ?? undefined,
    });
    return {
      request: read,
      payload: { ...payload, hook_event_name: read.event },
      form,
      deadlineMs,
    };
  } catch (error) {
    throw new HttpError(400, (error as Error).message);
  }
}

/** 409 for a client of another plugins dir: other guards than its own would answer it. */
export function checkPluginsDir(request: Request, served: readonly string[]): void {
  const header = request.headers.get(PLUGINS_DIR_HEADER);
  if (header === null) return;
  let asked: string;
  try {
    asked = decodeURI(header);
  } catch {
    throw new HttpError(400, `Malformed ${PLUGINS_DIR_HEADER} header: not percent-encoded text`);
  }
  if (served.includes(asked)) return;
  const message = `This daemon serves the plugins dir ${quoted(served[0])}, not ${quoted(asked)}`;
  throw new HttpError(409, message);
}

/** The decision in the form asked for, with status 200. */
export function agentAnswer(call: AgentCall, verdict: ToolVerdict, log: Logger): Response {
  if (call.form === "http") {
    const rendered = httpAnswer(call.request, verdict);
    if (rendered.dropped) log.log("debug", `Context dropped: ${rendered.dropped}`);
    return json(200, rendered.answer);
  }
  const rendered = commandAnswer(call.request, verdict);
  if (rendered.dropped) log.log("debug", `Context dropped: ${rendered.dropped}`);
  const { exitCode, stdout, stderr } = rendered.answer;
  return json(200, { exit_code: exitCode, stdout, stderr });
}
