/**
 * Which processes of a group are really running. A signal probe cannot tell: zombies count as
 * members until reaped, and where PID 1 does not reap (many containers) an orphan's zombie stays
 * in its group for good. On Linux, /proc tells live members from zombies.
 *
 * @module
 */

/**
 * The pids of group `pgid` that are not zombies. On hosts without /proc, returns `[pgid]` when a
 * signal probe finds the group and `[]` otherwise.
 *
 * @param pgid The process-group id.
 * @returns Live member pids.
 * @example
 * ```ts
 * import { liveGroupMembers } from "./group_members.ts";
 * console.assert(liveGroupMembers(2 ** 22 + 12345).length === 0);
 * ```
 */
export function liveGroupMembers(pgid: number): number[] {
  let entries: Iterable<Deno.DirEntry>;
  try {
    entries = Deno.readDirSync("/proc");
  } catch {
    return probe(pgid) ? [pgid] : [];
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

function probe(pgid: number): boolean {
  try {
    Deno.kill(-pgid, "SIGCONT");
    return true;
  } catch {
    return false;
  }
}
