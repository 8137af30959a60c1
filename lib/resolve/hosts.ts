/**
 * `task.hosts`: ty's second placement question, "where COULD this task go", asked while a person
 * picks a host. Every handler is asked and the lists are merged.
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
import { parseJson } from "../_json.ts";
import { goFields, isJsonObject } from "./_go_json.ts";
import type { PlacementInfo } from "./placement.ts";

/** The event hosts handlers handle. */
export const HOSTS_EVENT = "task.hosts";

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
 *
 * Requires `--allow-run`, `--allow-read`, `--allow-env`.
 *
 * @param runner The runner (plugin index, hosts timeout, grace, logger, abort signal).
 * @param info The task fields sent (a whole `Task` will do; no id needed).
 * @param options `deadlineMs` and `sequential` (see the consult loop).
 * @returns The candidates; empty when no handler offers any.
 * @example
 * ```ts
 * import { Runner } from "../hooks/runner.ts";
 * import { EMPTY_TASK } from "../task.ts";
 * import { listHosts } from "./hosts.ts";
 * const runner = new Runner({ dir: "/none", plugins: [], warnings: [] });
 * const { hosts } = await listHosts(runner, EMPTY_TASK);
 * if (hosts.length !== 0) throw new Error("no handler offers no host");
 * ```
 */
export async function listHosts(
  runner: ConsultRunner,
  info: Partial<PlacementInfo>,
  options: ConsultOptions = {},
): Promise<HostsList> {
  const handlers = pluginHandlers(runner, HOSTS_EVENT);
  if (handlers.length === 0) return { hosts: [] };
  const request = {
    event: HOSTS_EVENT,
    task: {
      id: info.id ?? 0,
      title: info.title ?? "",
      project: info.project ?? "",
      repo_path: info.repo_path ?? "",
      executor: info.executor ?? "",
      ...(info.remote_required ? { remote_required: true } : {}),
    },
  };
  const decided = await consult<{ hosts: HostCandidate[] } | { failure: string }>(runner, {
    event: HOSTS_EVENT,
    handlers,
    stdin: JSON.stringify(request) + "\n",
    env: { TASK_EVENT: HOSTS_EVENT },
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
      runner.log.log(
        "error",
        `Hosts handler "${name}" failed: ${meaning.failure}; no hosts from it`,
        {
          plugin: name,
        },
      );
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
 * empty); empty stdout means no candidates.
 *
 * @param stdout The handler's output.
 * @returns Its candidates, cleaned, or why the answer is unusable.
 */
export function readHostsAnswer(stdout: string): { hosts: HostCandidate[] } | { failure: string } {
  if (stdout.trim() === "") return { hosts: [] };
  const json = parseJson(stdout);
  if (!json.ok) return { failure: json.error };
  if (json.value === null) return { hosts: [] };
  if (!isJsonObject(json.value)) return { failure: `wrong type: answer: expected an object` };
  const list = goFields(json.value, ["hosts"] as const).hosts ?? [];
  if (!Array.isArray(list)) return { failure: `wrong type: "hosts": expected an array` };
  const hosts: HostCandidate[] = [];
  for (const [i, entry] of list.entries()) {
    if (entry === null) continue; // Go decodes null into an empty entry, which is dropped.
    if (!isJsonObject(entry)) return { failure: `wrong type: "hosts.${i}": expected an object` };
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
