/**
 * Free disk space of a directory, from one `df -Pk DIR` through the runner. Deno has no API for
 * it, and `df -P` (POSIX output: one line per file system, sizes in 1024-byte blocks) reads the
 * same on Linux, macOS and BusyBox.
 *
 * @module
 */

import { runScript } from "../process/run_script.ts";
import { failureReason } from "../process/record.ts";

/** Bound on the `df` call: a hung network mount must not hold the probe past pick-host's deadline. */
export const DF_TIMEOUT_MS = 1000;

// Filesystem, then four columns (blocks, used, available, capacity), then the mount point. The
// file system name is matched lazily because a mount point may hold spaces and digits; df prints
// "-" for a size it does not know.
const DF_LINE = /^(.*?)\s+(\d+|-)\s+(\d+|-)\s+(\d+|-)\s+(\d+%|-)\s+(\S.*)$/;

/**
 * Reads the available 1024-byte blocks out of `df -Pk` output.
 *
 * @param output What `df -Pk DIR` printed.
 * @returns Free bytes, or a string saying why the output could not be read.
 */
export function parseDfOutput(output: string): number | string {
  const lines = output.split(/\r?\n/).filter((line) => line.trim() !== "");
  if (lines.length < 2) return `unexpected df output: ${JSON.stringify(output.slice(0, 200))}`;
  // The last line: the header comes first, and nothing follows the one file system asked about.
  const match = DF_LINE.exec(lines[lines.length - 1].trim());
  if (match === null || match[4] === "-") {
    return `unexpected df output: ${JSON.stringify(lines[lines.length - 1].slice(0, 200))}`;
  }
  return Number(match[4]) * 1024;
}

/** Options of {@linkcode diskFree}. */
export interface DiskFreeOptions {
  /** Aborting it ends the `df` call at once. */
  signal?: AbortSignal;
  /** Bound on the `df` call; default {@linkcode DF_TIMEOUT_MS}. */
  timeoutMs?: number;
}

/**
 * Free bytes on the file system holding `dir`.
 *
 * Requires `--allow-run` (df) and `--allow-read`.
 *
 * @param options Abort signal and timeout.
 * @returns Free bytes, or a string saying why they could not be measured.
 */
export async function diskFree(
  dir: string,
  options: DiskFreeOptions = {},
): Promise<number | string> {
  const result = await runScript("df", {
    // "--" so a directory named like a flag is still a directory.
    args: ["-Pk", "--", dir],
    env: { LC_ALL: "C" },
    timeoutMs: options.timeoutMs ?? DF_TIMEOUT_MS,
    graceMs: 100,
    maxOutputBytes: 64 * 1024,
    signal: options.signal,
  });
  if (result.exit_code !== 0 || result.error !== null || result.timed_out) {
    const detail = result.stderr.trim().split("\n").pop() ?? "";
    const why = failureReason(result, options.timeoutMs ?? DF_TIMEOUT_MS);
    return `df ${why}${detail ? `: ${detail.slice(0, 200)}` : ""}`;
  }
  return parseDfOutput(result.stdout);
}
