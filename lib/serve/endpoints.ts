/**
 * The daemon's endpoints (lib/README.md, Daemon): the table, matching a request against it, and
 * the handlers, each one library call over the plugin snapshot taken when the request arrived and
 * answering what the matching command prints with `--json`. Fire-and-forget work is validated
 * (400 before anything is kept) and written to the spool before its 202: nothing is accepted that
 * is not on disk.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import type { Runner } from "../hooks/runner.ts";
import type { PersistentHooks } from "./persistent.ts";
import type { ServiceStatus } from "../wire/services.ts";
import { type EventQueue, StopDrop } from "./limits.ts";
import { type Spool, type SpoolDoc, type SpoolEntry, SpoolFullError } from "../spool/spool.ts";
import type { IndexHolder, Snapshot } from "./index_holder.ts";
import { VERSION } from "../version.ts";
import { errorResponse, HttpError, json, parseBody } from "./http.ts";
import {
  EMPTY_TASK,
  EventBodySchema,
  PlacementBodySchema,
  StatusChangeBodySchema,
  TaskBodySchema,
} from "../wire/task.ts";
import { POST_TOOL_CALL } from "../events.ts";
import { NotFoundError } from "../errors.ts";
import { quoted } from "../text.ts";
import { type RunRecord, toRecord } from "../process/run_script.ts";
import type { ToolVerdict } from "../consult/tool_hooks.ts";

// `import()` of a loaded module still costs a lookup and a promise per call, measurable on a hot
// endpoint: this pays it once, and once loaded `value` spares even the await.
function lazy<T>(load: () => Promise<T>): { (): Promise<T>; value?: T } {
  let loaded: Promise<T> | undefined;
  const get: { (): Promise<T>; value?: T } = () =>
    loaded ??= load().then((value) => get.value = value);
  return get;
}

const toolcalls = lazy(() => import("../consult/tool_hooks.ts"));
const agentCalls = lazy(() => import("./agent_call.ts"));
const decisions = lazy(() => import("../agents/hook.ts"));

/** The services the daemon supervises (`--services`): a `ServiceSet`. */
export interface ServiceSupervisor {
  status(): ServiceStatus[];
  /** SIGTERM to every group, SIGKILL after `stopTimeoutMs`. */
  stop(options?: { stopTimeoutMs?: number }): Promise<unknown>;
}

/** The runners of one snapshot (the table in server.ts). */
export interface DaemonRunners {
  decide: Runner;
  act: Runner;
  fire: Runner;
  /** The persistent hooks' processes, asked by `decide` and told by `fire`. */
  persistent: PersistentHooks;
}

/** State shared by every request. */
export interface DaemonState {
  holder: IndexHolder<DaemonRunners>;
  events: EventQueue;
  spool: Spool;
  /** Aborted when the stop cuts the notified hooks still running: their events stay spooled. */
  cut: AbortSignal;
  /** The dirs this daemon serves, recorded with each spooled event. */
  dirs: { plugins_dir: string; hooks_dir: string | null };
  /** Null without `--services`. */
  services: ServiceSupervisor | null;
  /** Set when the stop begins: requests arriving later get 503. */
  stopping: boolean;
  /** `performance.now()` at start. */
  startedAt: number;
  log: Logger;
}

/** One request, as a handler sees it. */
export interface Call {
  request: Request;
  /** Decoded path parameters, e.g. `event`. */
  params: Record<string, string>;
  /** Taken when the request arrived; kept for the whole call. */
  snapshot: Snapshot<DaemonRunners>;
  daemon: DaemonState;
  /** A spooled request run again (at start): its entry, already on disk. */
  spooled?: SpoolEntry;
}

export type Handler = (call: Call) => Promise<Response>;

/** `GET /v1/health`: `plugins_dir` lets a client tell whether it answers for the same plugins. */
function health(call: Call): Promise<Response> {
  const depth = call.daemon.spool.depth;
  return Promise.resolve(json(200, {
    ok: true,
    version: VERSION,
    plugins: call.snapshot.index.plugins.length,
    // Its real path (SPEC), as a client names its own.
    plugins_dir: servedDirs(call.daemon.dirs.plugins_dir)[1],
    uptime_s: Math.floor((performance.now() - call.daemon.startedAt) / 1000),
    spool_depth: depth.entries,
    spool_bytes: depth.bytes,
  }));
}

/** `GET /v1/plugins` -> the `plugins list --json` document, built by the same function. */
async function plugins(call: Call): Promise<Response> {
  const { pluginListJson } = await import("../plugins/listing.ts");
  return json(200, pluginListJson(call.snapshot.index));
}

/** `GET /v1/services`: an empty list when the daemon runs without `--services`. */
function services(call: Call): Promise<Response> {
  const list = (call.daemon.services?.status() ?? []).map((s) => ({
    plugin: s.plugin,
    name: s.name,
    state: s.state,
    pid: s.pid,
    restarts: s.restarts,
    last_exit: s.last_exit,
  }));
  return Promise.resolve(json(200, { services: list }));
}

/** `POST /v1/route` `{"task"?}` -> the `route --json` document: the value it prints. */
async function route(call: Call): Promise<Response> {
  const body = await parseBody(call.request, TaskBodySchema);
  return json(200, await call.snapshot.built.decide.route(body.task ?? EMPTY_TASK));
}

/** `POST /v1/placement` -> the `place` document; no target (run locally) is still 200. */
async function placement(call: Call): Promise<Response> {
  const body = await parseBody(call.request, PlacementBodySchema);
  const answer = await call.snapshot.built.decide.resolvePlacement({
    ...(body.task ?? EMPTY_TASK),
    remote_required: body.remote_required,
  });
  return json(200, answer);
}

/** `POST /v1/hosts` `{"task"?}` -> the `hosts` document, every handler's candidates merged. */
async function hosts(call: Call): Promise<Response> {
  const body = await parseBody(call.request, TaskBodySchema);
  const list = await call.snapshot.built.decide.listHosts(body.task ?? EMPTY_TASK);
  return json(200, { hosts: list.hosts });
}

/** `POST /v1/actions/{plugin}/{action}`: the `plugins run --json` record, whatever its exit. */
async function runAction(call: Call): Promise<Response> {
  const body = await parseBody(call.request, TaskBodySchema);
  const { plugin, action } = call.params;
  try {
    const result = await call.snapshot.built.act.runAction(plugin, action, { task: body.task });
    return json(200, { ...toRecord(result), stdout: result.stdout, stderr: result.stderr });
  } catch (error) {
    if (!(error instanceof NotFoundError)) throw error;
    throw new HttpError(404, `${error.message} (${error.hint})`);
  }
}

function wantsWait(request: Request): boolean {
  const wait = new URL(request.url).searchParams.get("wait");
  return wait === "1" || wait === "true" || wait === "yes";
}

/** Fire-and-forget work: `body` is the validated request body, kept in the spool. */
interface QueuedJob {
  what: string;
  body: unknown;
  /** Answer 200 with the result once it ran, instead of 202 at once. */
  wait: boolean;
  run: () => Promise<unknown>;
}

/**
 * How long after its 202 a fire-and-forget event's hooks start at the soonest. Its caller (an
 * agent's hook command, say) exits on the 202, and the agent waits for that exit: on a small
 * machine the hooks' first spawns, right after the answer, took the CPU from it (a post through
 * the daemon returned 5 ms later). Work that waited in the queue longer starts at once.
 */
const NOTIFIED_START_MS = 20;

async function enqueue(call: Call, job: QueuedJob): Promise<Response> {
  const { what } = job;
  const { spool, events, cut, dirs, log } = call.daemon;
  let entry = call.spooled;
  if (entry === undefined) {
    try {
      const request = { path: pathOf(call.request.url), body: job.body };
      entry = await spool.add({ what, request, ...dirs });
    } catch (error) {
      // Not on disk, so not accepted: the caller may send it again.
      if (!(error instanceof SpoolFullError)) log.log("error", (error as Error).message);
      throw new HttpError(503, (error as Error).message);
    }
  }
  const held = entry;
  const notBefore = job.wait ? 0 : performance.now() + NOTIFIED_START_MS;
  const done = events.submit(what, async () => {
    try {
      return await job.run();
    } finally {
      // Hooks cut by the stop did not finish: the event runs again at the next start.
      if (!cut.aborted) await spool.finish(held);
    }
  }, { notBefore });
  if (!job.wait) {
    // On disk either way: a queue closed by the stop leaves it for the next start.
    done?.catch((error) => {
      // Events left at stop are counted in one line by the daemon, not one line each.
      const level = error instanceof StopDrop ? "debug" : "warn";
      log.log(level, (error as Error).message);
    });
    return json(202, { accepted: true });
  }
  try {
    if (done === null) throw new StopDrop(`"${what}" not run: the daemon is stopping`);
    return json(200, await done);
  } catch (error) {
    const left = error instanceof StopDrop ? "; it stays in the spool for the next start" : "";
    throw new HttpError(503, `${(error as Error).message}${left}`);
  }
}

/**
 * Queues a request a previous daemon spooled, its body read as a live one's; throws (the caller
 * sets it aside) when it is not fire-and-forget or not valid.
 */
export async function requeue(
  daemon: DaemonState,
  entry: SpoolEntry,
  doc: Extract<SpoolDoc, { request: unknown }>,
): Promise<void> {
  const { handler, params } = matchEndpoint("POST", doc.request.path);
  if (!SPOOLED.has(handler)) throw new Error(`"${doc.request.path}" is not fire-and-forget`);
  const request = new Request(`http://localhost${doc.request.path}`, {
    method: "POST",
    body: JSON.stringify(doc.request.body ?? {}),
  });
  const snapshot = daemon.holder.current;
  const response = await handler({ request, params, snapshot, daemon, spooled: entry });
  if (response.status !== 202) {
    throw new Error(`${response.status}: ${(await response.json()).error ?? ""}`);
  }
}

/** `POST /v1/events/{event}` -> 202; with `?wait=1`, 200 and the `fire --json` document. */
async function fireEvent(call: Call): Promise<Response> {
  const body = await parseBody(call.request, EventBodySchema);
  const event = call.params.event;
  const runner = call.snapshot.built.fire;
  return await enqueue(call, {
    what: event,
    body,
    wait: wantsWait(call.request),
    run: async () => ({
      event,
      runs: await runner.fire(event, body.task ?? EMPTY_TASK, body.message),
    }),
  });
}

/** `POST /v1/status-change` -> like events; `event` is `""` when the status fires nothing. */
async function statusChange(call: Call): Promise<Response> {
  const body = await parseBody(call.request, StatusChangeBodySchema);
  const runner = call.snapshot.built.fire;
  return await enqueue(call, {
    what: `status ${body.status}`,
    body,
    wait: wantsWait(call.request),
    run: async () => {
      const result = await runner.onStatusChange(
        body.task ?? EMPTY_TASK,
        body.status,
        body.message,
      );
      return { event: result.event ?? "", runs: result.runs satisfies RunRecord[] };
    },
  });
}

/** `POST /v1/tool/pre`: failing hooks block; an ask stays one, for a caller that can ask. */
async function toolPre(call: Call): Promise<Response> {
  const { ToolCallSchema, ToolHooks } = toolcalls.value ?? await toolcalls();
  const body = await parseBody(call.request, ToolCallSchema);
  const hooks = new ToolHooks(call.snapshot.built.decide);
  const { action, reason, args, context } = await hooks.preToolCall(body, { canAsk: true });
  return json(200, { action, reason, args, context });
}

/** `POST /v1/tool/post` -> 202; the hooks run from the event queue. */
async function toolPost(call: Call): Promise<Response> {
  const { PostToolCallSchema, ToolHooks } = await toolcalls();
  const body = await parseBody(call.request, PostToolCallSchema);
  const hooks = new ToolHooks(call.snapshot.built.fire);
  return await enqueue(call, {
    what: POST_TOOL_CALL,
    body,
    wait: false,
    run: () => hooks.postToolCall(body),
  });
}

/**
 * `POST /v1/agent/{agent}`: decided as `tyhooks agent` decides, through the persistent guards;
 * answered as the agent's HTTP hook reads it, or (`?form=command`) as the command prints it.
 */
async function agentEvent(call: Call): Promise<Response> {
  const { readAgentCall, checkPluginsDir, agentAnswer } = agentCalls.value ?? await agentCalls();
  const { decideAgentEvent, tellAgentEvent } = decisions.value ?? await decisions();
  checkPluginsDir(call.request, servedDirs(call.daemon.dirs.plugins_dir));
  const read = await readAgentCall(call.request, call.params.agent);
  const { request } = read;
  if (!request.consulted) {
    const runner = call.snapshot.built.fire;
    return await enqueue(call, {
      what: request.pluginEvent,
      body: read.payload,
      wait: false,
      run: () => tellAgentEvent(runner, request),
    });
  }
  let verdict: ToolVerdict;
  try {
    const consult = { deadlineMs: read.deadlineMs };
    verdict = await decideAgentEvent(call.snapshot.built.decide, request, { consult });
  } catch (error) {
    // The command form's client decides itself on a 5xx; an HTTP hook is told a block.
    if (read.form === "command") throw error;
    verdict = { action: "block", reason: `tyhooks: ${(error as Error).message}` };
  }
  return agentAnswer(read, verdict, call.daemon.log);
}

// The dir as served and as its real path: a client names the real one.
let served: { dir: string; names: string[] } | undefined;

function servedDirs(dir: string): string[] {
  if (served?.dir === dir) return served.names;
  let real = dir;
  try {
    real = Deno.realPathSync(dir);
  } catch {
    // A dir that is gone serves no plugins; its name as given is all there is.
  }
  served = { dir, names: [dir, real] };
  return served.names;
}

/** One endpoint. `:name` path segments are parameters. */
export interface Endpoint {
  method: "GET" | "POST";
  path: string;
  handler: Handler;
}

/** Every endpoint, as SPEC lists them. */
export const ENDPOINTS: readonly Endpoint[] = [
  { method: "GET", path: "/v1/health", handler: health },
  { method: "GET", path: "/v1/plugins", handler: plugins },
  { method: "POST", path: "/v1/route", handler: route },
  { method: "POST", path: "/v1/placement", handler: placement },
  { method: "POST", path: "/v1/events/:event", handler: fireEvent },
  { method: "POST", path: "/v1/status-change", handler: statusChange },
  { method: "POST", path: "/v1/actions/:plugin/:action", handler: runAction },
  { method: "POST", path: "/v1/tool/pre", handler: toolPre },
  { method: "POST", path: "/v1/tool/post", handler: toolPost },
  { method: "POST", path: "/v1/agent/:agent", handler: agentEvent },
  { method: "POST", path: "/v1/hosts", handler: hosts },
  { method: "GET", path: "/v1/services", handler: services },
];

/** The handlers whose work is spooled: the only ones a spool entry may name. */
const SPOOLED = new Set<Handler>([fireEvent, statusChange, toolPost, agentEvent]);

const SPLIT = ENDPOINTS.map((e) => ({ ...e, segments: e.path.split("/") }));
// Paths without parameters, looked up before the table is walked.
const EXACT = new Map(ENDPOINTS.filter((e) => !e.path.includes(":")).map((e) => [e.path, e]));
const NO_PARAMS: Record<string, string> = Object.freeze({});

function matchPath(segments: string[], pattern: string[]): Record<string, string> | null {
  if (segments.length !== pattern.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(":")) {
      if (segments[i] === "") return null;
      try {
        params[pattern[i].slice(1)] = decodeURIComponent(segments[i]);
      } catch {
        return null;
      }
    } else if (segments[i] !== pattern[i]) {
      return null;
    }
  }
  return params;
}

/** The handler of a request and its decoded path parameters; 404, or 405 with `Allow`. */
export function matchEndpoint(
  method: string,
  pathname: string,
): { handler: Handler; params: Record<string, string> } {
  const exact = EXACT.get(pathname);
  if (exact?.method === method) return { handler: exact.handler, params: NO_PARAMS };
  const segments = pathname.split("/");
  const allowed: string[] = [];
  for (const endpoint of SPLIT) {
    const params = matchPath(segments, endpoint.segments);
    if (params === null) continue;
    if (endpoint.method === method) return { handler: endpoint.handler, params };
    allowed.push(endpoint.method);
  }
  if (allowed.length === 0) throw new HttpError(404, `Unknown path "${pathname}"`);
  throw new HttpError(405, `Method ${method} not allowed on "${pathname}": use ${allowed[0]}`, {
    allow: allowed.join(", "),
  });
}

/** Options of {@linkcode requestHandler}. */
export interface RequestHandlerOptions {
  /** Answers whether a request carries the token; null = no token required. */
  check: ((request: Request) => Promise<boolean>) | null;
  /** Why a request comes from a web page (refused, 403), or null. */
  fromBrowser: (request: Request) => string | null;
  log: Logger;
}

/** The daemon's HTTP handler. */
export function requestHandler(
  state: DaemonState,
  options: RequestHandlerOptions,
): (request: Request) => Promise<Response> {
  const { check, fromBrowser, log } = options;
  return async (request) => {
    const started = performance.now();
    let path = "";
    let response: Response;
    try {
      path = requestPath(request);
      // Before routing: a web page or a client without the token learns nothing, not even which
      // paths exist.
      const browser = fromBrowser(request);
      if (browser !== null) throw new HttpError(403, browser);
      if (check !== null && !(await check(request))) {
        throw new HttpError(401, "Missing or wrong bearer token", { "www-authenticate": "Bearer" });
      }
      const { handler, params } = matchEndpoint(request.method, path);
      // A request on a kept-alive connection may still come in while the daemon stops: it
      // gets a clear refusal, not an answer from half-stopped runners.
      if (state.stopping) throw new HttpError(503, "The daemon is stopping");
      const snapshot = state.holder.current;
      response = await handler({ request, params, snapshot, daemon: state });
    } catch (error) {
      if (!(error instanceof HttpError)) {
        log.log("error", `Request failed: ${(error as Error).message}`, { path });
      }
      response = errorResponse(error);
    }
    log.log("debug", "Request", {
      method: request.method,
      path,
      status: response.status,
      ms: Math.round(performance.now() - started),
    });
    return response;
  };
}

// Deno makes the request's URL from its `Host`: one that is no host and port (`[::1`, `a b`) makes
// none, and is refused before anything else.
function requestPath(request: Request): string {
  try {
    return pathOf(request.url);
  } catch {
    const host = quoted(request.headers.get("host") ?? "");
    throw new HttpError(400, `Malformed Host header ${host}: not a host name or address and port`);
  }
}

// `new URL()` costs more than the rest of routing, and a daemon sees the same few URLs again and
// again: short ones are remembered (at most 256 of at most 256 characters).
const paths = new Map<string, string>();

function pathOf(url: string): string {
  let path = paths.get(url);
  if (path === undefined) {
    path = new URL(url).pathname;
    if (url.length > 256) return path;
    if (paths.size >= 256) paths.clear();
    paths.set(url, path);
  }
  return path;
}
