/**
 * Per-call timeouts, in milliseconds, as SPEC sets them.
 *
 * @example
 * ```ts
 * import { DEFAULT_TIMEOUTS, type Timeouts } from "./timeouts.ts";
 * const patient: Timeouts = { ...DEFAULT_TIMEOUTS, placement: 10_000 };
 * console.assert(patient.placement === 10_000 && patient.route === 15_000);
 * ```
 */
export interface Timeouts {
  /** Event hooks (`fire`, `status-change`): 30 s. */
  event: number;
  /** Actions (`plugins run`): 60 s. */
  action: number;
  /** `task.route` handlers: 15 s. */
  route: number;
  /** `task.placement` handlers: 5 s. */
  placement: number;
  /** `task.hosts` handlers: 5 s. */
  hosts: number;
  /** `pre_tool_call` / `post_tool_call` hooks: 30 s. */
  tool: number;
}

/**
 * The defaults.
 *
 * @example
 * ```ts
 * import { DEFAULT_TIMEOUTS } from "./timeouts.ts";
 * console.assert(DEFAULT_TIMEOUTS.placement === 5_000 && DEFAULT_TIMEOUTS.event === 30_000);
 * ```
 */
export const DEFAULT_TIMEOUTS: Readonly<Timeouts> = Object.freeze({
  event: 30_000,
  action: 60_000,
  route: 15_000,
  placement: 5_000,
  hosts: 5_000,
  tool: 30_000,
});
