/**
 * Terminating a child's whole process group: SIGTERM, a grace period, then SIGKILL. The group id
 * is the child's pid because every child is started in its own session.
 *
 * @module
 */

import { groupHasLiveMembers } from "./group_members.ts";
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
 * @example
 * ```ts
 * import { signalGroup } from "./kill_group.ts";
 * console.assert(signalGroup(2 ** 22 + 12345, "SIGTERM") === false);
 * ```
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

/**
 * True while any process of group `pgid` is alive (zombies not yet reaped included). Probes with
 * SIGCONT, which is harmless: a stopped member resumes only to be terminated.
 *
 * @param pgid The group id.
 * @returns Whether the group still has members.
 * @example
 * ```ts
 * import { groupAlive } from "./kill_group.ts";
 * console.assert(groupAlive(2 ** 22 + 12345) === false);
 * ```
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
 * Terminates group `pgid`: SIGTERM to every member, wait until the group is empty or the grace
 * period ends, then SIGKILL whatever is left. Returns within the grace period plus a poll tick.
 *
 * @param pgid The group id (the child's pid).
 * @param options Grace period and the child's reaping.
 * @returns True when SIGKILL was needed.
 * @example
 * ```ts
 * import { terminateGroup } from "./kill_group.ts";
 * const child = new Deno.Command("setsid", { args: ["sleep", "30"] }).spawn();
 * await terminateGroup(child.pid, { graceMs: 200, reaped: child.status });
 * console.assert((await child.status).signal === "SIGTERM");
 * ```
 */
export async function terminateGroup(
  pgid: number,
  options: TerminateOptions = {},
): Promise<boolean> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  if (!signalGroup(pgid, "SIGTERM")) return false;
  let reaped = options.reaped === undefined;
  options.reaped?.then(() => reaped = true, () => reaped = true);
  const deadline = performance.now() + graceMs;
  while (performance.now() < deadline) {
    await sleep(POLL_MS);
    if (reaped && !(await groupHasLiveMembers(pgid))) return false;
  }
  return signalGroup(pgid, "SIGKILL");
}
