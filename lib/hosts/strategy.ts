/**
 * How pick-host chooses among the hosts that answered, and the reason it gives.
 *
 * @module
 */

import type { HostFacts } from "./probe_schema.ts";

/**
 * The strategies, the default first.
 */
export const STRATEGIES = ["most-free-memory", "least-loaded"] as const;
/**
 * A strategy: the most available memory, or the lowest 1-minute load per CPU.
 */
export type Strategy = typeof STRATEGIES[number];

/**
 * A host that answered.
 */
export interface Candidate {
  /** The host's name, as the hosts file gives it. */
  name: string;
  /** What its probe answered. */
  facts: HostFacts;
}

/**
 * The chosen host and why.
 */
export interface Choice {
  /** The chosen host's name. */
  name: string;
  /** E.g. `most free memory: 12.3 GiB of 31.2 GiB`. */
  reason: string;
}

const UNITS = ["B", "KiB", "MiB", "GiB", "TiB", "PiB"];

/**
 * Formats a byte count with binary units and one decimal.
 *
 * @returns E.g. `12.3 GiB`.
 */
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
 * Chooses a host by `strategy`; ties break by name (the alphabetically first wins).
 *
 * @param candidates The hosts that answered (at least one).
 * @param strategy `most-free-memory` (max `mem_available_bytes`) or `least-loaded` (min
 * `load_avg[0] / cpus`).
 * @returns The chosen host's name and a reason a person can read.
 * @throws {RangeError} When `candidates` is empty.
 * @example
 * ```ts
 * import { choose } from "./strategy.ts";
 * const facts = (mem: number, load: number) => ({
 *   hostname: "h", os: "linux", arch: "x86_64", cpus: 4, load_avg: [load, 0, 0] as [number, number, number],
 *   mem_total_bytes: 2 ** 35, mem_available_bytes: mem, disk_free_bytes: 0, uptime_s: 1, version: "0.1.0",
 * });
 * const hosts = [{ name: "b", facts: facts(2 ** 34, 0.4) }, { name: "a", facts: facts(2 ** 33, 0.1) }];
 * console.assert(choose(hosts, "most-free-memory").name === "b");
 * console.assert(choose(hosts, "least-loaded").reason === "least loaded: 0.03 per cpu (load 0.10, 4 cpus)");
 * ```
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
