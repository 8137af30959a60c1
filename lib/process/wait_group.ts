/**
 * Waiting for a process group to empty. SIGKILL is delivered asynchronously: for a moment after
 * `kill(2)` returns, the killed processes still run (or are exiting), so a caller that promises
 * "nothing is left" waits for the group to empty before it says so. A notified hook's run also
 * lasts until its group is empty (its background work has finished).
 *
 * @module
 */

import { groupHasLiveMembers } from "./group_members.ts";
import { sleep } from "../_timers.ts";

/** First poll interval; it doubles up to MAX_POLL_MS. */
const POLL_MS = 5;
/**
 * A notified hook's background job may run for its whole timeout (30 s): polling it every
 * 100 ms keeps the cost of telling zombies apart (a /proc scan, or a pgrep without /proc) small,
 * and a finished job is seen at most this late.
 */
const MAX_POLL_MS = 100;

/**
 * Waits until group `pgid` has no live member (zombies do not count), at most `ms`, or until
 * `signal` aborts. The first check is immediate; then polls back off from 5 ms to 100 ms.
 *
 * Requires `--allow-run` where /proc cannot be read (see `groupHasLiveMembers`).
 *
 * @param pgid The group id.
 * @param ms The bound.
 * @param options `signal`: stops the wait early (the result is then false unless empty).
 * @returns True when the group is empty.
 */
export async function waitGroupEmpty(
  pgid: number,
  ms: number,
  options: { signal?: AbortSignal } = {},
): Promise<boolean> {
  const deadline = performance.now() + ms;
  let poll = POLL_MS;
  while (true) {
    if (!(await groupHasLiveMembers(pgid))) return true;
    const left = deadline - performance.now();
    if (left <= 0 || options.signal?.aborted) return false;
    if (!(await sleep(Math.min(poll, left), options.signal))) return false;
    poll = Math.min(poll * 2, MAX_POLL_MS);
  }
}
