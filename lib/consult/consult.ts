/**
 * The one consult loop of every consulted call (`route`, `place`, `hosts`, `tool pre`). ty asks
 * handlers one after another in plugin-name order and stops at the first answer that settles the
 * question (`internal/hooks/consulted.go`); tyhooks reaches the same decision without paying N
 * timeouts: all start at once, answers are read in plugin-name order, and once the outcome is
 * settled the rest are terminated. Each keeps its full timeout, so the result is ty's whenever each
 * answers within it. `sequential` asks as ty does, for handlers with side effects.
 *
 * @module
 */

import type { Plugin } from "../plugins/types.ts";
import type { Logger } from "../log.ts";
import {
  cutAnswer,
  DRAIN_MS,
  failureReason,
  type RunResult,
  succeeded,
} from "../process/run_script.ts";
import { checkDuration, clearableTimeout } from "../async.ts";
import { parseAnswer, type Schema } from "../wire/json.ts";

/** Options every consulted call takes. */
export interface ConsultOptions {
  /**
   * Bound on the whole call, in ms. Default: none beyond each handler's own timeout (all run at
   * once); with `sequential`, the sum of the handlers' timeouts.
   */
  deadlineMs?: number;
  /**
   * When the deadline started, on the `performance.now()` clock; default: now. A caller that
   * spent part of it first (loading the plugins) passes its own start.
   */
  startedAt?: number;
  /** Ask one handler after another, as ty does, instead of all at once. */
  sequential?: boolean;
}

/**
 * SIGTERM-to-SIGKILL grace for consulted handlers: at most this, whatever the runner's grace. A
 * caller waits on them, so one that ignores SIGTERM gets less patience than an event hook.
 */
export const CONSULT_GRACE_MS = 200;

/** Below this a script can hardly start: a tiny deadline still gives a handler this much. */
const MIN_HANDLER_MS = 50;

/** One question to one handler, as the loop asks it. */
export interface AskRequest {
  /** The event asked about, e.g. `task.placement`. */
  event: string;
  /** The plugin whose hook this is; null for an explicit script (`--pre-hook`). */
  plugin: Plugin | null;
  /** The script to run. */
  script: string;
  /** The request line (a JSON document), when the hook reads one on stdin. */
  stdin?: string;
  /** Variables added to the inherited environment (the plugin's own are added by the runner). */
  env?: Record<string, string>;
  /** The handler's timeout. */
  timeoutMs: number;
  /** Its SIGTERM-to-SIGKILL grace. */
  graceMs: number;
  /** Aborted when the answer is no longer needed (settled, deadline, shutdown). */
  signal: AbortSignal;
}

/**
 * Asks one handler and returns its run. The default runs the script once per call; the daemon
 * plugs in persistent processes here, falling back to `once` for the other hooks.
 */
export type AskHandler = (
  request: AskRequest,
  once: (request: AskRequest) => Promise<RunResult>,
) => Promise<RunResult>;

/** What the loop needs of a runner (the `Runner` of `lib/hooks/runner.ts` is one). */
export interface ConsultRunner {
  readonly log: Logger;
  /** The runner's SIGTERM-to-SIGKILL grace. */
  readonly graceMs: number;
  /** Aborted when tyhooks shuts down. */
  readonly signal?: AbortSignal;
  /** Plugins handling `event`, in name order. */
  handlers(event: string): Plugin[];
  /** The timeout of `plugin`'s hook for `event` (explicit, else its own setting, else default). */
  timeoutFor(event: string, plugin: Plugin | null): number;
  ask(request: AskRequest): Promise<RunResult>;
}

/** One handler of a call. */
export interface ConsultHandler {
  /** Null for an explicit script (`--pre-hook`). */
  plugin: Plugin | null;
  script: string;
  timeoutMs: number;
}

/** How a handler's question ended. */
export type Answer =
  /** It ran (`result` says how: exit code, timeout, output). */
  | { ran: true; result: RunResult; timeoutMs: number }
  /** It did not answer in time for the call: still running at the deadline, or never asked. */
  | { ran: false; reason: string };

/** One call through the loop. */
export interface Consultation<T> {
  /** The event asked about. */
  event: string;
  /** The handlers, in decision order. */
  handlers: ConsultHandler[];
  /** The request line on stdin, if any. */
  stdin?: string;
  /** Extra environment of every handler. */
  env?: Record<string, string>;
  /** What an answer means. Pure: it may be called for answers that end up unused. */
  read(answer: Answer, handler: ConsultHandler): T | Promise<T>;
  /** True when a meaning settles the call: later handlers' answers are not needed. */
  settles(meaning: T): boolean;
}

/** A handler and what its answer meant. */
export interface Decided<T> {
  handler: ConsultHandler;
  meaning: T;
}

/** The handlers of `event` (of `plugins`, default all) as the loop takes them, in their order. */
export function pluginHandlers(
  runner: ConsultRunner,
  event: string,
  plugins: readonly Plugin[] = runner.handlers(event),
): ConsultHandler[] {
  return plugins.map((plugin) => ({
    plugin,
    script: plugin.hooks[event],
    timeoutMs: runner.timeoutFor(event, plugin),
  }));
}

/**
 * What the handlers' answers meant, in decision order, up to the first that settles the call.
 * Nothing outlives the call: the rest are terminated before it returns. Never rejects.
 */
export async function consult<T>(
  runner: ConsultRunner,
  call: Consultation<T>,
  options: ConsultOptions = {},
): Promise<Decided<T>[]> {
  const { handlers } = call;
  if (handlers.length === 0) return [];
  const graceMs = Math.min(runner.graceMs, CONSULT_GRACE_MS);
  // The kill and the drain after it fit inside the deadline, so the caller waits no longer.
  const reserve = graceMs + DRAIN_MS;
  if (options.deadlineMs !== undefined) checkDuration(options.deadlineMs, "deadlineMs");
  const deadlineMs = options.deadlineMs ??
    (options.sequential ? handlers.reduce((sum, h) => sum + h.timeoutMs + reserve, 0) : undefined);
  const end = deadlineMs === undefined
    ? Infinity
    : (options.startedAt ?? performance.now()) + deadlineMs;
  // Cut `reserve` ms early, so that ending the handlers fits inside the deadline: said so.
  const late =
    `did not answer within the ${deadlineMs} ms deadline (less the ${reserve} ms kept to end it)`;

  // One controller for the call: settling, the deadline and shutdown all end what still runs.
  const stop = new AbortController();
  const outer = runner.signal;
  const onOuter = () => stop.abort(outer?.reason);
  outer?.addEventListener("abort", onOuter, { once: true });
  if (outer?.aborted) stop.abort(outer.reason);
  let cut = false;
  const cutoff = end === Infinity || options.sequential ? null : clearableTimeout(
    Math.max(end - performance.now() - reserve, Math.min(deadlineMs!, MIN_HANDLER_MS)),
  );
  cutoff?.signal.addEventListener("abort", () => {
    cut = true;
    stop.abort();
  }, { once: true });

  const ask = async (handler: ConsultHandler, timeoutMs: number): Promise<Answer> => {
    const result = await runner.ask({
      event: call.event,
      plugin: handler.plugin,
      script: handler.script,
      stdin: call.stdin,
      env: call.env,
      timeoutMs,
      graceMs,
      signal: stop.signal,
    });
    if (cut && !result.timed_out && result.error !== null && !outer?.aborted) {
      return { ran: false, reason: late };
    }
    return { ran: true, result, timeoutMs };
  };
  // The first handler is always asked, so that even a tiny deadline asks someone.
  const askInTurn = (handler: ConsultHandler, first: boolean): Promise<Answer> => {
    const room = Math.floor(end - performance.now() - reserve);
    if (room < MIN_HANDLER_MS && !first) {
      return Promise.resolve({
        ran: false,
        reason: `not asked: the ${deadlineMs} ms deadline was spent`,
      });
    }
    return ask(handler, Math.min(handler.timeoutMs, Math.max(room, MIN_HANDLER_MS)));
  };

  const started = options.sequential ? [] : handlers.map((h) => ask(h, h.timeoutMs));
  const decided: Decided<T>[] = [];
  try {
    for (const [i, handler] of handlers.entries()) {
      const answer = await (options.sequential ? askInTurn(handler, i === 0) : started[i]);
      const meaning = await call.read(answer, handler);
      decided.push({ handler, meaning });
      if (call.settles(meaning)) break;
    }
  } finally {
    cutoff?.clear();
    // A plain reason: abort() without one builds a DOMException (a stack trace) on every call.
    stop.abort("settled");
    outer?.removeEventListener("abort", onOuter);
    // The terminated handlers' groups are gone before the caller goes on (or exits).
    if (decided.length < started.length) await Promise.allSettled(started);
  }
  return decided;
}

/**
 * A consulted handler's run read as a JSON answer: the answer, null when it printed nothing, or
 * why it gave none (it failed, under `timeoutMs`; its answer was cut at the output cap; or it is
 * not what `schema` reads). Fails closed: a cut answer is never silence, whatever was kept.
 */
export function readJsonAnswer<T>(
  result: RunResult,
  schema: Schema<T>,
  timeoutMs: number,
): { answer: T | null } | { failure: string } {
  if (!succeeded(result)) return { failure: failureReason(result, timeoutMs) };
  const cut = cutAnswer(result);
  if (cut !== null) return { failure: cut };
  if (result.stdout.trim() === "") return { answer: null };
  const parsed = parseAnswer(schema, result.stdout);
  return parsed.ok ? { answer: parsed.answer } : { failure: parsed.error };
}
