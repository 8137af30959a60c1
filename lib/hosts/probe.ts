/**
 * This host's facts (`tyhooks probe`), from Deno's own APIs plus one `df` for free disk. No zod
 * here: the probe runs on every agent host for every placement, so it loads as little as it can.
 *
 * @module
 */

import type { HostFacts } from "./probe_schema.ts";
import { type Logger, silentLogger } from "../log.ts";
import { VERSION } from "../version.ts";
import { diskFree } from "./disk_free.ts";

/**
 * Options of {@linkcode probeHost}.
 */
export interface ProbeOptions {
  /** Directory whose free disk is reported; default `$HOME` (the current dir when unset). */
  workdir?: string;
  /** Where a failed disk measurement is reported; default silent. */
  log?: Logger;
  /** Aborting it ends the `df` call at once. */
  signal?: AbortSignal;
}

/**
 * Describes this host: name, OS, CPUs, load, memory, free disk of the workdir, uptime, version.
 *
 * When free disk cannot be measured (no `df`, a missing workdir, a hung mount past 1 s) the probe
 * still answers, with `disk_free_bytes: 0` and a warning in the log: neither pick-host strategy
 * reads disk, so losing a whole host from placement over it would be worse than a zero.
 *
 * Requires `--allow-sys` (hostname, load, memory, uptime), `--allow-env` (HOME), `--allow-run`
 * and `--allow-read` (df).
 *
 * @param options Workdir, logger, abort signal.
 * @returns The facts, in the field order `tyhooks probe` prints them.
 * @example
 * ```ts
 * import { probeHost } from "./probe.ts";
 * const facts = await probeHost({ workdir: "/" });
 * console.assert(facts.cpus > 0 && facts.mem_total_bytes > 0);
 * ```
 */
export async function probeHost(options: ProbeOptions = {}): Promise<HostFacts> {
  const workdir = options.workdir || Deno.env.get("HOME") || Deno.cwd();
  const memory = Deno.systemMemoryInfo();
  const [one, five, fifteen] = Deno.loadavg();
  const disk = await diskFree(workdir, { signal: options.signal });
  if (typeof disk === "string") {
    (options.log ?? silentLogger).log(
      "warn",
      `Cannot measure free disk of "${workdir}": ${disk}; reporting 0`,
    );
  }
  return {
    hostname: Deno.hostname(),
    os: Deno.build.os,
    arch: Deno.build.arch,
    // Never 0, which the schema refuses and least-loaded would divide by.
    cpus: Math.max(1, navigator.hardwareConcurrency || 1),
    load_avg: [one, five, fifteen],
    mem_total_bytes: memory.total,
    mem_available_bytes: memory.available,
    disk_free_bytes: typeof disk === "number" ? disk : 0,
    uptime_s: Deno.osUptime(),
    version: VERSION,
  };
}
