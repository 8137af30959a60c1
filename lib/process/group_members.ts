/**
 * Which processes of a group are really running. A signal probe cannot tell: zombies count as
 * members until reaped, and where PID 1 does not reap (many containers) an orphan's zombie stays
 * in its group for good, so a kill would always wait out its whole grace period.
 *
 * /proc tells live members from zombies, but Deno lets a program read /proc only with
 * `--allow-all`, which the binary does not have; then `pgrep -r` (procps) answers instead.
 *
 * @module
 */

/** Process states that count as alive: everything but zombie (Z) and dead (X). */
const LIVE_STATES = "R,S,D,T,t,W,I,P";
let pgrepMissing = false;

/**
 * The pids of group `pgid` that are not zombies, read from /proc.
 *
 * @param pgid The process-group id.
 * @returns Live member pids, or null when /proc cannot be read (no /proc, or no permission).
 * @example
 * ```ts
 * import { liveGroupMembers } from "./group_members.ts";
 * const members = liveGroupMembers(2 ** 22 + 12345);
 * console.assert(members === null || members.length === 0);
 * ```
 */
export function liveGroupMembers(pgid: number): number[] | null {
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return null;
  }
  const live: number[] = [];
  for (const entry of entries) {
    const pid = Number(entry.name);
    if (!Number.isInteger(pid)) continue;
    let stat: string;
    try {
      stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    } catch {
      continue; // Exited while we looked.
    }
    // Fields after the command name, which is in parentheses and may hold spaces: state ppid pgrp.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (Number(fields[2]) === pgid && fields[0] !== "Z" && fields[0] !== "X") live.push(pid);
  }
  return live;
}

/**
 * True while group `pgid` has a member that is not a zombie. Asks a signal probe first (free),
 * then /proc, then `pgrep`; with none of them able to tell, a group the probe sees counts as
 * alive (the safe side: the caller then waits out its grace and SIGKILLs).
 *
 * Requires `--allow-run` for the pgrep fallback.
 *
 * @param pgid The process-group id.
 * @returns Whether a live member remains.
 * @example
 * ```ts
 * import { groupHasLiveMembers } from "./group_members.ts";
 * console.assert(!(await groupHasLiveMembers(2 ** 22 + 12345)));
 * ```
 */
export async function groupHasLiveMembers(pgid: number): Promise<boolean> {
  if (!probe(pgid)) return false;
  const members = liveGroupMembers(pgid);
  if (members !== null) return members.length > 0;
  return (await pgrepLive(pgid)) ?? true;
}

async function pgrepLive(pgid: number): Promise<boolean | null> {
  if (pgrepMissing) return null;
  try {
    const { code } = await new Deno.Command("pgrep", {
      args: ["-g", String(pgid), "-r", LIVE_STATES],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    // 0: matched, 1: none; anything else (an old pgrep without -r) cannot tell.
    return code === 0 ? true : code === 1 ? false : null;
  } catch {
    pgrepMissing = true;
    return null;
  }
}

function probe(pgid: number): boolean {
  try {
    Deno.kill(-pgid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}
