/**
 * Waiting for a process group to empty. SIGKILL is delivered asynchronously: for a moment after
 * `kill(2)` returns, the killed processes still run (or are exiting), so a caller that promises
 * "nothing is left" waits for the group to empty before it says so.
 *
 * @module
 */

import { groupHasLiveMembers } from "./group_members.ts";
import { sleep } from "../_timers.ts";

const POLL_MS = 5;

/**
 * Waits until group `pgid` has no live member (zombies do not count), at most `ms`.
 *
 * Requires `--allow-run` where /proc cannot be read (see `groupHasLiveMembers`).
 *
 * @param pgid The group id.
 * @param ms The bound.
 * @returns True when the group is empty.
 * @example
 * ```ts
 * import { waitGroupEmpty } from "./wait_group.ts";
 * console.assert(await waitGroupEmpty(2 ** 22 + 12345, 100));
 * ```
 */
export async function waitGroupEmpty(pgid: number, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  while (true) {
    if (!(await groupHasLiveMembers(pgid))) return true;
    if (performance.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
}
