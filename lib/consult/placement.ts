/**
 * Where a task runs: `task.placement` ("on which host does this task run", the first named
 * target wins) and `task.hosts` ("where could it go", every handler's list merged). Handlers'
 * JSON answers are read as Go's `encoding/json` reads ty's structs: keys in any case, `null` as
 * empty, extra keys ignored. Also the wire formats of both: each request and answer as an
 * interface and its reader.
 *
 * @module
 */

import {
  type Answer,
  consult,
  type ConsultOptions,
  type ConsultRunner,
  pluginHandlers,
  readJsonAnswer,
} from "./consult.ts";
import { succeeded } from "../process/run_script.ts";
import { excerpt } from "../text.ts";
import {
  array,
  boolean,
  number,
  object,
  oneOf,
  optional,
  orDefault,
  string,
} from "../wire/json.ts";
import type { Infer, Same, Schema } from "../wire/json.ts";
import { TASK_HOSTS, TASK_PLACEMENT } from "../events.ts";
import { recordDecision } from "../log.ts";

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
 * Asks the `task.placement` plugins through the consult loop: the first non-empty target wins.
 * Silence or an empty target is a deliberate local answer, as in ty (the first one is returned
 * when nobody names a target); a failing handler is logged at error level and counts as local.
 * Never rejects.
 */
export async function resolvePlacement(
  runner: ConsultRunner,
  info: PlacementInfo,
  options: ConsultOptions = {},
): Promise<Placement> {
  const startedAt = performance.now();
  const handlers = pluginHandlers(runner, TASK_PLACEMENT);
  if (handlers.length === 0) return { ...LOCAL_PLACEMENT };
  const decided = await consult<Reading<PlacementAnswer>>(runner, {
    event: TASK_PLACEMENT,
    handlers,
    stdin: JSON.stringify(handlerRequest(TASK_PLACEMENT, info)) + "\n",
    // As ty: the task is in the request, not the environment.
    env: { TASK_EVENT: TASK_PLACEMENT },
    // Silence is a deliberate "run locally" (ty: an empty target by another spelling).
    read: (answer) => readAnswer(answer, PlacementAnswerSchema, LOCAL_PLACEMENT),
    settles: (meaning) => "answer" in meaning && meaning.answer.target !== "",
  }, options);
  let placement: Placement | undefined;
  for (const { handler, meaning } of decided) {
    const name = handler.plugin!.name;
    if (!("answer" in meaning)) {
      const { failure, stderr, stdout } = meaning;
      const message = `Placement handler "${name}" failed: ${failure}; treated as local`;
      runner.log.log("error", message, { plugin: name, stderr, stdout });
      continue;
    }
    // The first named target wins; else the first local answer stands.
    if (placement === undefined || meaning.answer.target !== "") {
      const { target, workdir, reason } = meaning.answer;
      placement = { target, workdir, reason, handler: name };
    }
    if (placement.target !== "") break;
  }
  placement ??= { ...LOCAL_PLACEMENT };
  recordDecision({
    event: TASK_PLACEMENT,
    task_id: info.id,
    decision: placement.target || "local",
    reason: placement.reason,
    plugin: placement.handler,
    startedAt,
  }, runner.log);
  return placement;
}

/** What a handler's run meant: its answer, or why it gave none, with what it printed. */
type Reading<T> = { answer: T } | { failure: string; stderr?: string; stdout?: string };

function readAnswer<T>(answer: Answer, schema: Schema<T>, silence: T): Reading<T> {
  if (!answer.ran) return { failure: answer.reason };
  const { result } = answer;
  const read = readJsonAnswer(result, schema, answer.timeoutMs);
  if ("answer" in read) return { answer: read.answer ?? silence };
  // What it printed where the reason is: stderr for a run that failed, else the answer.
  return succeeded(result)
    ? { failure: read.failure, stdout: excerpt(result.stdout) }
    : { failure: read.failure, stderr: excerpt(result.stderr) };
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

/**
 * `task.hosts`, ty's "where COULD this task go" while a person picks a host: every handler's list
 * merged in plugin-name order, a duplicate `target` keeping the first; a failing handler adds
 * nothing (logged). Never rejects.
 */
export async function listHosts(
  runner: ConsultRunner,
  info: Partial<PlacementInfo>,
  options: ConsultOptions = {},
): Promise<HostsList> {
  const startedAt = performance.now();
  const handlers = pluginHandlers(runner, TASK_HOSTS);
  if (handlers.length === 0) return { hosts: [] };
  const decided = await consult<Reading<HostsList>>(runner, {
    event: TASK_HOSTS,
    handlers,
    stdin: JSON.stringify(handlerRequest(TASK_HOSTS, info)) + "\n",
    env: { TASK_EVENT: TASK_HOSTS },
    read: (answer) => readAnswer(answer, HostsAnswerSchema, { hosts: [] }),
    // Never decisive: every handler is asked, and the lists add up.
    settles: () => false,
  }, options);
  const hosts: HostCandidate[] = [];
  const seen = new Set<string>();
  const from: string[] = [];
  for (const { handler, meaning } of decided) {
    const name = handler.plugin!.name;
    if (!("answer" in meaning)) {
      const { failure, stderr, stdout } = meaning;
      const message = `Hosts handler "${name}" failed: ${failure}; no hosts from it`;
      runner.log.log("error", message, { plugin: name, stderr, stdout });
      continue;
    }
    from.push(name);
    for (const host of meaning.answer.hosts) {
      // Each name or target fills the other; an entry with neither is dropped.
      const target = host.target || host.name;
      if (target === "" || seen.has(target)) continue;
      seen.add(target);
      hosts.push({ ...host, target, name: host.name || target });
    }
  }
  recordDecision({
    event: TASK_HOSTS,
    task_id: info.id ?? 0,
    decision: hosts.map((host) => host.target).join(",") || "none",
    reason: "",
    plugin: from.join(","),
    startedAt,
  }, runner.log);
  return { hosts };
}

// The wire formats: what a handler reads on stdin and what it answers.

/** What a placement question is about: a whole `Task` will do (only these fields are sent). */
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

/** The request a placement handler reads on stdin, as sent (`remote_required` only when true). */
export interface PlacementRequest {
  /** Always `task.placement`. */
  event: "task.placement";
  /** The task to place: only these fields, so that a handler never learns its body. */
  task: PlacementInfo;
}

/**
 * A placement handler's answer, read: every field a string, `""` when missing or null; target
 * and workdir trimmed, reason as written.
 */
export interface PlacementAnswer {
  /** The host to run on; `""` = run locally. */
  target: string;
  /** A path on the target host (a leading `~` is left alone); may be empty. */
  workdir: string;
  /** Why, in words a person can read, as written; may be empty. */
  reason: string;
}

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

/** A hosts handler's answer, and the `hosts` document: `{"hosts":[...]}`. */
export interface HostsList {
  /** The candidates, in plugin-name order. */
  hosts: HostCandidate[];
}

const text = orDefault(string(), "");
const trimmed = orDefault(string({ trim: true }), "");

const placementRequest = object({
  event: oneOf([TASK_PLACEMENT]),
  task: object({
    id: orDefault(number({ integer: true, min: 0 }), 0),
    title: text,
    project: text,
    repo_path: text,
    executor: text,
    remote_required: optional(boolean()),
  }),
});
true satisfies Same<Infer<typeof placementRequest>, PlacementRequest>;

/** The request a `task.placement` handler reads on stdin. */
export const PlacementRequestSchema: Schema<PlacementRequest> = placementRequest;

// As ty: target and workdir trimmed, the reason shown as the handler wrote it.
const placementAnswer = object({ target: trimmed, workdir: trimmed, reason: text }, { go: true });
true satisfies Same<Infer<typeof placementAnswer>, PlacementAnswer>;

/** A `task.placement` handler's answer: strings, missing or null = empty, keys in any case. */
export const PlacementAnswerSchema: Schema<PlacementAnswer> = placementAnswer;

const host = object({ name: trimmed, target: trimmed, workdir: trimmed, detail: trimmed }, {
  go: true,
});

/** A `task.hosts` handler's answer, each field trimmed (a null entry reads as an empty one). */
export const HostsAnswerSchema = object({ hosts: orDefault(array(host), []) }, { go: true });
true satisfies Same<Infer<typeof HostsAnswerSchema>, HostsList>;
