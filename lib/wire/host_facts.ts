/**
 * The wire format of `tyhooks probe`: one JSON object of host facts. `pick-host` validates every
 * host's answer with this schema, so it is the single source of truth for both ends. Loaded
 * lazily: `tyhooks probe` itself never needs zod, only the side that reads answers does.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "./schema.ts";

const bytes = z.number().int().nonnegative();

/**
 * Zod schema of a probe answer, a {@linkcode HostFacts}. Unknown keys are stripped rather than refused, so a control host
 * keeps reading answers from agent hosts that run a newer tyhooks with more facts.
 */
export const HostFactsSchema = z.object({
  hostname: z.string(),
  os: z.string(),
  arch: z.string(),
  // At least one: least-loaded divides the load by it.
  cpus: z.number().int().positive(),
  load_avg: z.tuple([z.number().nonnegative(), z.number().nonnegative(), z.number().nonnegative()]),
  mem_total_bytes: bytes,
  mem_available_bytes: bytes,
  disk_free_bytes: bytes,
  uptime_s: z.number().nonnegative(),
  version: z.string(),
}) satisfies z.ZodType<HostFacts>;

// The schema validates, the interface documents: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof HostFactsSchema>, HostFacts>;

/**
 * One host's facts, as `tyhooks probe` prints them (in this order) and `pick-host` reads them.
 */
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
