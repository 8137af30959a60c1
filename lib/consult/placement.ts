/**
 * Where a task runs: `task.placement` ("on which host does this task run", the first named
 * target wins) and `task.hosts` ("where could it go", every handler's list merged). Handlers'
 * JSON answers are read as Go's `encoding/json` reads ty's structs: keys in any case, `null` as
 * empty, extra keys ignored. A well-formed placement answer is built directly; anything else goes
 * to the zod schema (`lib/wire/placement.ts`), which says precisely what is wrong; a test keeps
 * both readings equal.
 *
 * @module
 */

import { consult, type ConsultOptions, type ConsultRunner, pluginHandlers } from "./consult.ts";
import { failureReason, succeeded } from "../process/run_script.ts";
import type { PlacementAnswer, PlacementInfo } from "../wire/placement.ts";
import { excerpt } from "../text.ts";
import { goFields, isRecord, parseJson } from "../wire/json.ts";
import { TASK_HOSTS, TASK_PLACEMENT } from "../events.ts";

export type { PlacementInfo };

/** The placement (`place` prints exactly this). */
export interface Placement {
  /** The host; `""` = run locally. */
  target: string;
  /** A path on the target host, as the handler gave it (a leading `~` is left alone). */
  workdir: string;
  /** Why, in words a person can read, kept as written (not trimmed); may be empty. */
  reason: string;
  /** The plugin whose answer this is; `""` when no handler answered. */
  handler: string;
}

/** The answer when no handler answered: run locally. */
export const LOCAL_PLACEMENT: Readonly<Placement> = Object.freeze({
  target: "",
  workdir: "",
  reason: "",
  handler: "",
});

/**
 * Asks the plugins handling `task.placement`, decided in name order through the consult loop.
 * The request `{"event":"task.placement","task":{...}}` goes to stdin, and the environment adds
 * only `TASK_EVENT` and the plugin variables, as ty's does; the answer `{"target","workdir",
 * "reason"}` is read from stdout as Go's `encoding/json` reads it (keys in any case, `null` as
 * empty), target and workdir trimmed, reason kept as written. The first non-empty target wins. Exit 0 with empty stdout, or an answer with
 * an empty target, is a deliberate local answer, as in ty: the first one is returned, naming its
 * handler, when nobody names a target. A timeout, crash, non-zero exit, malformed JSON or wrong
 * type is logged at error level with the handler's name and counts as local. Never rejects.
 */
export async function resolvePlacement(
  runner: ConsultRunner,
  info: PlacementInfo,
  options: ConsultOptions = {},
): Promise<Placement> {
  const handlers = pluginHandlers(runner, TASK_PLACEMENT);
  if (handlers.length === 0) return { ...LOCAL_PLACEMENT };
  const decided = await consult<PlacementMeaning>(runner, {
    event: TASK_PLACEMENT,
    handlers,
    stdin: JSON.stringify(handlerRequest(TASK_PLACEMENT, info)) + "\n",
    // As ty: the task is in the request, not the environment.
    env: { TASK_EVENT: TASK_PLACEMENT },
    async read(answer) {
      if (!answer.ran) return { failure: answer.reason };
      const { result } = answer;
      if (!succeeded(result)) {
        return { failure: failureReason(result, answer.timeoutMs), stderr: excerpt(result.stderr) };
      }
      // Silence is a deliberate "run locally" (ty: an empty target by another spelling).
      if (result.stdout.trim() === "") return { answer: { target: "", workdir: "", reason: "" } };
      const parsed = await readPlacementAnswer(result.stdout);
      if (!parsed.ok) return { failure: parsed.error, stdout: excerpt(result.stdout) };
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

interface PlacementMeaning {
  answer?: PlacementAnswer;
  failure?: string;
  stderr?: string;
  stdout?: string;
}

// Only the fields SPEC lists: a handler must not learn the task body by accident.
function handlerRequest(
  event: typeof TASK_PLACEMENT | typeof TASK_HOSTS,
  info: Partial<PlacementInfo>,
): { event: string; task: PlacementInfo } {
  return {
    event,
    task: {
      id: info.id ?? 0,
      title: info.title ?? "",
      project: info.project ?? "",
      repo_path: info.repo_path ?? "",
      executor: info.executor ?? "",
      ...(info.remote_required ? { remote_required: true } : {}),
    },
  };
}

const PLACEMENT_FIELDS = ["target", "workdir", "reason"] as const;

/**
 * Parses a placement handler's stdout (known not to be blank), without loading zod when it is
 * well formed: the answer, or why it is not one (`malformed JSON: ...`, `wrong type: ...`).
 */
export async function readPlacementAnswer(
  stdout: string,
): Promise<{ ok: true; answer: PlacementAnswer } | { ok: false; error: string }> {
  const json = parseJson(stdout);
  if (!json.ok) return json;
  const value = json.value;
  if (value === null) return { ok: true, answer: { target: "", workdir: "", reason: "" } };
  if (isRecord(value)) {
    const fields = goFields(value, PLACEMENT_FIELDS);
    const answer = { target: "", workdir: "", reason: "" };
    let wellFormed = true;
    for (const field of PLACEMENT_FIELDS) {
      const text = fields[field] ?? "";
      // As ty: target and workdir trimmed, the reason shown as the handler wrote it.
      if (typeof text === "string") answer[field] = field === "reason" ? text : text.trim();
      else wellFormed = false;
    }
    if (wellFormed) return { ok: true, answer };
  }
  const { parsePlacementAnswer } = await import("../wire/placement.ts");
  return parsePlacementAnswer(stdout);
}

// `task.hosts`: ty's second placement question, "where COULD this task go", asked while a person
// picks a host. Every handler is asked and the lists are merged.

/** One machine a task could be placed on (`hosts` prints a list of these). */
export interface HostCandidate {
  /** What a person reads; filled from `target` when the handler gave none. */
  name: string;
  /** The ssh destination a placement records; filled from `name` when the handler gave none. */
  target: string;
  /** The task's directory on that host (a leading `~` is left alone); may be empty. */
  workdir: string;
  /** A one-liner shown beside the name; may be empty. */
  detail: string;
}

/** The `hosts` document: `{"hosts":[...]}`. */
export interface HostsList {
  /** The candidates, in plugin-name order. */
  hosts: HostCandidate[];
}

const HOST_FIELDS = ["name", "target", "workdir", "detail"] as const;

/**
 * Asks every plugin handling `task.hosts` (all started together, or one after another with
 * `sequential`) and merges their lists in plugin-name order: each field trimmed, an empty
 * `target` filled from `name` and the other way round, entries with neither dropped, a duplicate
 * `target` keeping the first entry. A failing or unusable handler contributes nothing (logged).
 * The request is `{"event":"task.hosts","task":{...}}`, as for `task.placement`. Never rejects.
 */
export async function listHosts(
  runner: ConsultRunner,
  info: Partial<PlacementInfo>,
  options: ConsultOptions = {},
): Promise<HostsList> {
  const handlers = pluginHandlers(runner, TASK_HOSTS);
  if (handlers.length === 0) return { hosts: [] };
  const decided = await consult<{ hosts: HostCandidate[] } | { failure: string }>(runner, {
    event: TASK_HOSTS,
    handlers,
    stdin: JSON.stringify(handlerRequest(TASK_HOSTS, info)) + "\n",
    env: { TASK_EVENT: TASK_HOSTS },
    read(answer) {
      if (!answer.ran) return { failure: answer.reason };
      const { result } = answer;
      if (!succeeded(result)) return { failure: failureReason(result, answer.timeoutMs) };
      return readHostsAnswer(result.stdout);
    },
    // Never decisive: every handler is asked, and the lists add up.
    settles: () => false,
  }, options);
  const hosts: HostCandidate[] = [];
  const seen = new Set<string>();
  for (const { handler, meaning } of decided) {
    const name = handler.plugin!.name;
    if ("failure" in meaning) {
      const failure = `Hosts handler "${name}" failed: ${meaning.failure}; no hosts from it`;
      runner.log.log("error", failure, { plugin: name });
      continue;
    }
    for (const host of meaning.hosts) {
      if (seen.has(host.target)) continue;
      seen.add(host.target);
      hosts.push(host);
    }
  }
  return { hosts };
}

/**
 * Reads a hosts handler's stdout as ty does (Go's `encoding/json`: keys in any case, `null` as
 * empty): its candidates, cleaned, or why the answer is unusable. Empty stdout: no candidates.
 */
export function readHostsAnswer(stdout: string): { hosts: HostCandidate[] } | { failure: string } {
  if (stdout.trim() === "") return { hosts: [] };
  const json = parseJson(stdout);
  if (!json.ok) return { failure: json.error };
  if (json.value === null) return { hosts: [] };
  if (!isRecord(json.value)) return { failure: `wrong type: answer: expected an object` };
  const list = goFields(json.value, ["hosts"] as const).hosts ?? [];
  if (!Array.isArray(list)) return { failure: `wrong type: "hosts": expected an array` };
  const hosts: HostCandidate[] = [];
  for (const [i, entry] of list.entries()) {
    if (entry === null) continue; // Go decodes null into an empty entry, which is dropped.
    if (!isRecord(entry)) return { failure: `wrong type: "hosts.${i}": expected an object` };
    const fields = goFields(entry, HOST_FIELDS);
    const host = { name: "", target: "", workdir: "", detail: "" };
    for (const field of HOST_FIELDS) {
      const text = fields[field] ?? "";
      if (typeof text !== "string") {
        return { failure: `wrong type: "hosts.${i}.${field}": expected a string` };
      }
      host[field] = text.trim();
    }
    host.target ||= host.name;
    host.name ||= host.target;
    if (host.target !== "") hosts.push(host);
  }
  return { hosts };
}
