/**
 * This host's facts (`tyhooks probe`), from Deno's own APIs plus one `df` for free disk. No zod
 * here: the probe runs on every agent host for every placement, so it loads as little as it can.
 *
 * @module
 */

import type { HostFacts } from "../wire/host_facts.ts";
import { type Logger, silentLogger } from "../log.ts";
import { VERSION } from "../version.ts";
import { failureReason, runScript, succeeded } from "../process/run_script.ts";
import { quoted } from "../text.ts";

/** Options of {@linkcode probeHost}. */
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

// Free disk space: Deno has no API for it, and `df -P` (POSIX output: one line per file system,
// sizes in 1024-byte blocks) reads the same on Linux, macOS and BusyBox.

/** Bound on the `df` call: a hung network mount must not hold the probe past pick-host's deadline. */
export const DF_TIMEOUT_MS = 1000;

// Filesystem, then four columns (blocks, used, available, capacity), then the mount point. The
// file system name is matched lazily because a mount point may hold spaces and digits; df prints
// "-" for a size it does not know.
const DF_LINE = /^(.*?)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\d+%|-)\s+(\S.*)$/;

/** The free bytes `df -Pk DIR` printed, or why its output could not be read. */
export function parseDfOutput(output: string): number | string {
  const lines = output.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (lines.length < 2) return `unexpected df output: ${quoted(output.slice(0, 200))}`;
  // The last line: the header comes first, and nothing follows the one file system asked about.
  const match = DF_LINE.exec(lines[lines.length - 1].trim());
  if (match === null || match[4] === "-") {
    return `unexpected df output: ${quoted(lines[lines.length - 1].slice(0, 200))}`;
  }
  return Number(match[4]) * 1024;
}

/** Free bytes on the file system holding `dir`, or why they could not be measured. */
export async function diskFree(
  dir: string,
  options: { signal?: AbortSignal } = {},
): Promise<number | string> {
  const result = await runScript("df", {
    // "--" so a directory named like a flag is still a directory.
    args: ["-Pk", "--", dir],
    env: { LC_ALL: "C" },
    timeoutMs: DF_TIMEOUT_MS,
    graceMs: 100,
    maxOutputBytes: 64 * 1024,
    signal: options.signal,
  });
  if (!succeeded(result)) {
    const detail = result.stderr.trim().split("\n").pop() ?? "";
    const why = failureReason(result, DF_TIMEOUT_MS);
    return `df ${why}${detail ? `: ${detail.slice(0, 200)}` : ""}`;
  }
  return parseDfOutput(result.stdout);
}
