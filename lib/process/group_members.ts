/**
 * Which processes of a group are really running. A signal probe cannot tell: zombies count as
 * members until reaped, and where PID 1 does not reap (many containers) an orphan's zombie stays
 * in its group for good, so a kill would always wait out its whole grace period.
 *
 * /proc tells live members from zombies, but Deno lets a program read /proc only with
 * `--allow-all`, which the binary does not have; then `pgrep -r` (procps) answers for a group,
 * and `ps` lists a session's members (ps is everywhere, pgrep's `-r` is not).
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
 */
export function liveGroupMembers(pgid: number): number[] | null {
  return scanProc((pgrp) => pgrp === pgid);
}

/**
 * The live processes of session `sid` that are outside group `sid`: descendants that made a group
 * of their own (`set -m`, `process_group=0`) and so escape a group signal; only `setsid` leaves
 * the session. Read from /proc, else from `ps` (/proc denied to tyhooks, or macOS).
 *
 * Requires `--allow-run` for the ps fallback.
 *
 * @param sid The session id (the script's pid: every script leads its own session and group).
 * @returns Their pids, or null when neither /proc nor ps can tell.
 */
export async function sessionStrays(sid: number): Promise<number[] | null> {
  const outside = (pgrp: number, session: number) => session === sid && pgrp !== sid;
  return scanProc(outside) ?? await psScan(outside);
}

type Match = (pgrp: number, session: number) => boolean;

function scanProc(match: Match): number[] | null {
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
    // Fields after the command name, which is in parentheses and may hold spaces:
    // state ppid pgrp session.
    const [state, _ppid, pgrp, session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 4);
    if (state !== "Z" && state !== "X" && match(Number(pgrp), Number(session))) live.push(pid);
  }
  return live;
}

let psMissing = false;

async function psScan(match: Match): Promise<number[] | null> {
  if (psMissing) return null;
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("ps", {
      args: ["-e", "-o", "pid=,pgid=,sid=,stat="],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
  } catch {
    psMissing = true;
    return null;
  }
  if (!output.success) return null;
  const live: number[] = [];
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const [pid, pgrp, session, state] = line.trim().split(/\s+/);
    if (state !== undefined && !/^[ZX]/.test(state) && match(Number(pgrp), Number(session))) {
      live.push(Number(pid));
    }
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
 */
export async function groupHasLiveMembers(pgid: number): Promise<boolean> {
  if (!groupAlive(pgid)) return false;
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

/**
 * True while any process of group `pgid` is alive (zombies not yet reaped included). Probes with
 * SIGCONT, which is harmless: a stopped member resumes only to be terminated.
 *
 * @param pgid The group id.
 * @returns Whether the group still has members.
 */
export function groupAlive(pgid: number): boolean {
  try {
    Deno.kill(-pgid, "SIGCONT");
    return true;
  } catch {
    // ESRCH: gone. EPERM: the group exists but is not ours to signal, so waiting is pointless.
    return false;
  }
}
