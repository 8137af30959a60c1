/**
 * Terminating a child's whole process group, and then its whole session: SIGTERM, a grace
 * period, then SIGKILL. The group id and the session id are the child's pid because every child
 * is started in its own session. A descendant that made a group of its own (`set -m`,
 * `process_group=0`) is out of the group but still in the session, so it is found by a scan and
 * signalled too; only a deliberate `setsid` escapes.
 *
 * @module
 */

import { groupHasLiveMembers, sessionStrays } from "./group_members.ts";

export { groupAlive } from "./group_members.ts";
import { sleep } from "../_timers.ts";

const POLL_MS = 10;

/** Default time between SIGTERM and SIGKILL. */
export const DEFAULT_GRACE_MS = 500;

/**
 * Sends `signal` to the process group `pgid`. Until the child has made itself a group leader
 * (a few microseconds after spawn, when `setsid(1)` is the isolator) the group does not exist
 * yet, so the child itself is signalled instead.
 *
 * @param pgid The group id (the child's pid).
 * @param signal The signal.
 * @returns False when neither the group nor the process exists any more.
 */
export function signalGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return !(error instanceof Deno.errors.PermissionDenied);
    }
  }
  try {
    Deno.kill(pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Options of {@linkcode terminateGroup}. */
export interface TerminateOptions {
  /** How long members get between SIGTERM and SIGKILL; default 500 ms. */
  graceMs?: number;
  /**
   * Resolves when the direct child has been reaped. Until then its zombie keeps the group
   * "alive", so the wait for an empty group includes it.
   */
  reaped?: Promise<unknown>;
}

/**
 * Terminates group `pgid` and the rest of its session: SIGTERM to every member of the group, then
 * to the session's strays (members outside the group); wait until all are gone or the grace
 * period ends, then SIGKILL whatever is left (the strays scanned again). Returns within the grace
 * period plus a poll tick and one scan.
 *
 * Requires `--allow-run` where /proc cannot be read (the scans then use ps and pgrep).
 *
 * @param pgid The group id (the child's pid, also its session id).
 * @param options Grace period and the child's reaping.
 * @returns True when SIGKILL was needed.
 */
export async function terminateGroup(
  pgid: number,
  options: TerminateOptions = {},
): Promise<boolean> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const deadline = performance.now() + graceMs;
  if (!signalGroup(pgid, "SIGTERM")) return false;
  // Scanned after the group's signal, so members that fork while dying are seen; the scan's cost
  // counts against the grace period, keeping the call's bound.
  const strays = await signalStrays(pgid, "SIGTERM");
  let reaped = options.reaped === undefined;
  options.reaped?.then(() => reaped = true, () => reaped = true);
  // Checked at least once even when the scan (a ps spawn on a loaded host) used up the grace.
  do {
    await sleep(Math.max(0, Math.min(POLL_MS, deadline - performance.now())));
    if (
      reaped && !(await groupHasLiveMembers(pgid)) &&
      (strays === 0 || (await signalStrays(pgid, null)) === 0)
    ) return false;
  } while (performance.now() < deadline);
  const killed = signalGroup(pgid, "SIGKILL");
  return (await signalStrays(pgid, "SIGKILL")) > 0 || killed;
}

/** Sends `signal` to each stray of session `sid` (null: none, just count them). */
async function signalStrays(sid: number, signal: Deno.Signal | null): Promise<number> {
  const members = await sessionStrays(sid) ?? [];
  if (signal !== null) {
    for (const pid of members) {
      try {
        Deno.kill(pid, signal);
      } catch {
        // Gone since the scan.
      }
    }
  }
  return members.length;
}
