/**
 * Picking a host (`pick-host`): ask every host for its facts at once, within one deadline, keep
 * the ones that answered well, choose by strategy, and say why in a placement answer.
 *
 * @module
 */

import { createLimit } from "../_util.ts";
import type { HostEntry } from "./hosts_file.ts";
import type { PlacementAnswer } from "../wire/placement.ts";
import { askHost, type HostOutcome } from "./ask_host.ts";
import { type Candidate, choose, type Strategy } from "./strategy.ts";
import { type Logger, silentLogger } from "../log.ts";

/** Default bound on the whole call. */
export const DEFAULT_PICK_TIMEOUT_MS = 3000;
/** Default number of probes running at once. */
export const DEFAULT_PARALLELISM = 64;
/**
 * Default SIGTERM-to-SIGKILL grace of a probe past the deadline. Short on purpose: the runner
 * returns within time left + grace + 100 ms, so the call ends by timeout + 300 ms plus scheduling,
 * inside SPEC's timeout + 1 s. An ssh client dies on SIGTERM; a stub that ignores it gets SIGKILL.
 */
export const DEFAULT_PROBE_GRACE_MS = 200;

/**
 * What {@linkcode pickHost} found.
 */
export interface PickResult {
  /**
   * The placement answer: `target` is the chosen host's name (empty = run locally), `workdir` its
   * workdir from the hosts file (may be empty; `~` left alone), `reason` why, for a person.
   */
  answer: PlacementAnswer;
  /** One outcome per host, in the order given. */
  outcomes: HostOutcome[];
}

/**
 * Options of {@linkcode pickHost}.
 */
export interface PickOptions {
  /** Default `most-free-memory`. */
  strategy?: Strategy;
  /** Bound on the whole call (every probe ends by then); default 3000 ms. */
  timeoutMs?: number;
  /** Probes running at once; default 64. */
  parallelism?: number;
  /** Grace of a probe past the deadline; default 200 ms. */
  graceMs?: number;
  /** Working directory of the probes (the CLI uses the hosts file's directory). */
  cwd?: string;
  /** Where dropped hosts are reported; default silent. */
  log?: Logger;
  /** Aborting it terminates every probe at once and starts no more. */
  signal?: AbortSignal;
}

/**
 * Probes `hosts` concurrently (at most `parallelism` at a time) within one deadline, drops the
 * ones that fail, time out, print garbage or a wrong answer (each logged with the reason), and
 * chooses among the rest by strategy, ties by name. A host whose turn comes after the deadline is
 * dropped unasked. Never rejects for the hosts' sake: no usable host is a local answer whose
 * reason lists why each was dropped.
 *
 * Returns within `timeoutMs` + `graceMs` + 100 ms plus scheduling, whatever the hosts do.
 *
 * Requires `--allow-run` and `--allow-read`.
 *
 * @param hosts The hosts, e.g. from `readHostsFile`.
 * @param options Strategy, timeout, parallelism, grace, cwd, logger, abort signal.
 * @returns The answer and every host's outcome.
 * @example
 * ```ts
 * import { pickHost } from "./pick.ts";
 * import { parseHostsFile } from "./hosts_file.ts";
 * const facts = (mem: number) => JSON.stringify({
 *   hostname: "h", os: "linux", arch: "x86_64", cpus: 4, load_avg: [0, 0, 0],
 *   mem_total_bytes: 2 ** 35, mem_available_bytes: mem, disk_free_bytes: 0, uptime_s: 1,
 *   version: "0.1.0",
 * });
 * const hosts = parseHostsFile(
 *   `a ~/w -- echo '${facts(2 ** 33)}'\nb /srv -- echo '${facts(2 ** 34)}'\nc -- exit 255\n`,
 *   "hosts",
 * );
 * const { answer } = await pickHost(hosts, { timeoutMs: 2000 });
 * console.assert(answer.target === "b" && answer.workdir === "/srv");
 * console.assert(answer.reason === "most free memory: 16.0 GiB of 32.0 GiB");
 * ```
 */
export async function pickHost(hosts: HostEntry[], options: PickOptions = {}): Promise<PickResult> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PICK_TIMEOUT_MS;
  const graceMs = options.graceMs ?? DEFAULT_PROBE_GRACE_MS;
  const log = options.log ?? silentLogger;
  const deadline = performance.now() + timeoutMs;
  const outcomes: HostOutcome[] = new Array(hosts.length);
  const limit = createLimit(options.parallelism ?? DEFAULT_PARALLELISM);
  await Promise.all(hosts.map((host, slot) =>
    limit(async () => {
      const left = Math.floor(deadline - performance.now());
      outcomes[slot] = options.signal?.aborted
        ? unasked(host, "not probed: interrupted")
        : left <= 0
        ? unasked(host, `not probed: the ${timeoutMs} ms deadline passed first`)
        : await askHost(host, {
          timeoutMs: left,
          deadlineMs: timeoutMs,
          graceMs,
          cwd: options.cwd,
          signal: options.signal,
        });
    })
  ));

  const candidates: Candidate[] = [];
  for (const outcome of outcomes) {
    if (outcome.facts !== null) {
      candidates.push({ name: outcome.host.name, facts: outcome.facts });
      continue;
    }
    log.log("warn", `Host "${outcome.host.name}" dropped: ${outcome.reason}`);
  }
  if (candidates.length === 0) {
    const why = outcomes.map((o) => `${o.host.name} (${o.reason})`).join(", ") || "no host listed";
    return { answer: { target: "", workdir: "", reason: `no host answered: ${why}` }, outcomes };
  }
  const choice = choose(candidates, options.strategy ?? "most-free-memory");
  const chosen = hosts.find((host) => host.name === choice.name)!;
  log.log("debug", `Picked host "${chosen.name}": ${choice.reason}`);
  return {
    answer: { target: chosen.name, workdir: chosen.workdir, reason: choice.reason },
    outcomes,
  };
}

function unasked(host: HostEntry, reason: string): HostOutcome {
  return { host, facts: null, reason, pid: null, duration_ms: 0 };
}
