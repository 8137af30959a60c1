/**
 * The wire format of `tyhooks probe`: one JSON object of host facts. `pick-host` reads every
 * host's answer with {@linkcode HostFactsSchema}, the single source of truth for both ends.
 *
 * @module
 */

import { type Infer, number, object, type Same, type Schema, string, tuple } from "./json.ts";

/** One host's facts, as `tyhooks probe` prints them (in this order) and `pick-host` reads them. */
export interface HostFacts {
  /** The host's name, as it calls itself. */
  hostname: string;
  /** Deno's name of the OS, e.g. `linux`, `darwin`. */
  os: string;
  /** Deno's name of the CPU architecture, e.g. `x86_64`, `aarch64`. */
  arch: string;
  /** Logical CPUs, at least 1. */
  cpus: number;
  /** Load averages over 1, 5 and 15 minutes. */
  load_avg: [number, number, number];
  /** Physical memory, in bytes. */
  mem_total_bytes: number;
  /** Memory available to new processes, in bytes. */
  mem_available_bytes: number;
  /** Free disk of the probed workdir, in bytes; 0 when it could not be measured. */
  disk_free_bytes: number;
  /** Seconds since the host booted. */
  uptime_s: number;
  /** The tyhooks version that answered. */
  version: string;
}

const bytes = number({ integer: true, min: 0 });
const load = number({ min: 0 });

const hostFacts = object({
  hostname: string(),
  os: string(),
  arch: string(),
  // At least one: least-loaded divides the load by it.
  cpus: number({ integer: true, min: 1 }),
  load_avg: tuple([load, load, load]),
  mem_total_bytes: bytes,
  mem_available_bytes: bytes,
  disk_free_bytes: bytes,
  uptime_s: number({ min: 0 }),
  version: string(),
});
true satisfies Same<Infer<typeof hostFacts>, HostFacts>;

/**
 * What `tyhooks probe` prints and `pick-host` reads. Unknown keys are dropped rather than refused,
 * so a control host keeps reading answers from agent hosts that run a newer tyhooks with more facts.
 */
export const HostFactsSchema: Schema<HostFacts> = hostFacts;
