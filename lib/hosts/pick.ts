/**
 * Picking a host (`pick-host`): ask every host for its facts at once, within one deadline, keep
 * the ones that answered well, choose by strategy, and say why in a placement answer. Every
 * failure becomes a short reason a person can read in a log line or in the answer.
 *
 * @module
 */

import { createLimit } from "../async.ts";
import type { PlacementAnswer } from "../consult/placement.ts";
import { type Logger, silentLogger } from "../log.ts";
import type { HostEntry } from "./hosts_file.ts";
import { failureReason, type RunResult, runScript, succeeded } from "../process/run_script.ts";
import { type HostFacts, HostFactsSchema } from "../wire/host_facts.ts";
import { issueText, parseJson } from "../wire/json.ts";
import { quoted } from "../text.ts";

export const DEFAULT_PICK_TIMEOUT_MS = 3000;
export const DEFAULT_PARALLELISM = 64;
/**
 * Default SIGTERM-to-SIGKILL grace of a probe past the deadline. Short on purpose: the runner
 * returns within time left + grace + 100 ms, so the call ends by timeout + 300 ms plus scheduling,
 * inside SPEC's timeout + 1 s. An ssh client dies on SIGTERM; a stub that ignores it gets SIGKILL.
 */
export const DEFAULT_PROBE_GRACE_MS = 200;

/** What {@linkcode pickHost} found. */
export interface PickResult {
  /**
   * The placement answer: `target` is the chosen host's name (empty = run locally), `workdir` its
   * workdir from the hosts file (may be empty; `~` left alone), `reason` why, for a person.
   */
  answer: PlacementAnswer;
  /** One outcome per host, in the order given. */
  outcomes: HostOutcome[];
}

/** Options of {@linkcode pickHost}. */
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
 * Probes `hosts` concurrently within one deadline, drops those that fail (each logged with why)
 * and chooses among the rest by strategy, ties by name; with none left, a local answer whose
 * reason says why. Returns within `timeoutMs` + `graceMs` + 100 ms whatever the hosts do.
 * Requires `--allow-run` and `--allow-read`.
 *
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

  const candidates = outcomes.flatMap(({ host, facts, reason }): Candidate[] => {
    if (facts === null) log.log("warn", `Host "${host.name}" dropped: ${reason}`);
    return facts === null ? [] : [{ name: host.name, facts }];
  });
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

// Asking one host.

/** A probe answer is one small JSON object; anything bigger is not one. */
export const PROBE_OUTPUT_CAP = 64 * 1024;

/** What asking one host gave. */
export interface HostOutcome {
  /** The host asked. */
  host: HostEntry;
  /** The facts, or null when the host was dropped. */
  facts: HostFacts | null;
  /** Why the host was dropped (`timed out after 3000 ms`, `exited 255: ...`), else null. */
  reason: string | null;
  /** The probe's pid (its process-group id); null when it did not start. */
  pid: number | null;
  /** Wall time of the probe. */
  duration_ms: number;
}

/** Options of {@linkcode askHost}. */
export interface AskOptions {
  timeoutMs: number;
  /** The bound a timeout reason names (pick-host's whole deadline); default `timeoutMs`. */
  deadlineMs?: number;
  graceMs: number;
  cwd?: string;
  signal?: AbortSignal;
}

/** Runs `host`'s probe and validates its answer: facts, or why not. Never rejects. */
export async function askHost(host: HostEntry, options: AskOptions): Promise<HostOutcome> {
  const [program, ...args] = host.probe;
  const result = await runScript(program, {
    args,
    cwd: options.cwd,
    timeoutMs: options.timeoutMs,
    graceMs: options.graceMs,
    maxOutputBytes: PROBE_OUTPUT_CAP,
    signal: options.signal,
  });
  const outcome = { host, pid: result.pid, duration_ms: result.duration_ms };
  let reason: string | null = null;
  if (!succeeded(result)) {
    reason = sshFailure(result, options.deadlineMs ?? options.timeoutMs);
    // The host answered, but has no tyhooks where its ssh commands look.
    if (result.exit_code === 127 && host.probe.slice(-2).join(" ") === "tyhooks probe") {
      reason += ` (hint: tyhooks hosts sync ${host.name})`;
    }
  } else if (result.stdout_truncated) {
    reason = `printed more than ${PROBE_OUTPUT_CAP / 1024} KiB`;
  }
  if (reason !== null) return { ...outcome, facts: null, reason };
  const checked = check(result.stdout);
  return typeof checked === "string"
    ? { ...outcome, facts: null, reason: checked }
    : { ...outcome, facts: checked, reason: null };
}

/**
 * Why a run over ssh failed: the runner's reason, then the last stderr line, where ssh says why
 * (`exited 255: ssh: connect to host gpu-3 port 22: Connection refused`).
 */
export function sshFailure(result: RunResult, timeoutMs: number): string {
  const reason = failureReason(result, timeoutMs);
  const last = result.stderr.trim().split("\n").pop()?.trim();
  return result.error === null && last ? `${reason}: ${clip(last)}` : reason;
}

function check(stdout: string): HostFacts | string {
  const text = stdout.trim();
  if (text === "") return "printed nothing";
  // The whole output, else its last line: a login shell's rc file may print before the answer.
  let json = parseJson(text);
  if (!json.ok) json = parseJson(text.slice(text.lastIndexOf("\n") + 1));
  if (!json.ok) return `printed garbage: ${clip(quoted(text))}`;
  const parsed = HostFactsSchema.safeParse(json.value);
  if (parsed.success) return parsed.data;
  const [issue, ...more] = parsed.error.issues;
  const rest = more.length ? ` (and ${more.length} more)` : "";
  return `wrong probe answer: ${issueText(issue)}${rest}`;
}

function clip(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

// Choosing among the hosts that answered, and the reason given.

/** A strategy: the most available memory, or the lowest 1-minute load per CPU. */
export type Strategy = "most-free-memory" | "least-loaded";
/** The strategies, the default first. */
export const STRATEGIES: readonly Strategy[] = ["most-free-memory", "least-loaded"];

/** A host that answered: its name in the hosts file, and its facts. */
export interface Candidate {
  name: string;
  facts: HostFacts;
}

/** The chosen host, and why (`most free memory: 12.3 GiB of 31.2 GiB`). */
export interface Choice {
  name: string;
  reason: string;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/** A byte count with binary units and one decimal: `12.3 GiB`. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  return unit === 0 ? `${value} B` : `${value.toFixed(1)} ${UNITS[unit]}`;
}

// Load per CPU is compared as it is shown, to 0.01: hosts a person reads as equally loaded are
// a tie, and the name decides, rather than noise in the third decimal.
function loadPerCpu(facts: HostFacts): number {
  return Math.round((facts.load_avg[0] / facts.cpus) * 100) / 100;
}

/**
 * Chooses among the hosts that answered: `most-free-memory` (max `mem_available_bytes`) or
 * `least-loaded` (min `load_avg[0] / cpus`); ties break by name. `candidates` is not empty.
 */
export function choose(candidates: Candidate[], strategy: Strategy): Choice {
  if (candidates.length === 0) throw new RangeError("No candidate to choose from");
  const better = strategy === "least-loaded"
    ? (a: Candidate, b: Candidate) => loadPerCpu(a.facts) - loadPerCpu(b.facts)
    : (a: Candidate, b: Candidate) => b.facts.mem_available_bytes - a.facts.mem_available_bytes;
  const [best] = [...candidates].sort((a, b) =>
    better(a, b) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
  const f = best.facts;
  const reason = strategy === "least-loaded"
    ? `least loaded: ${loadPerCpu(f).toFixed(2)} per cpu (load ${f.load_avg[0].toFixed(2)}, ${
      f.cpus === 1 ? "1 cpu" : `${f.cpus} cpus`
    })`
    : `most free memory: ${formatBytes(f.mem_available_bytes)} of ${
      formatBytes(f.mem_total_bytes)
    }`;
  return { name: best.name, reason };
}
