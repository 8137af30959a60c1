/**
 * The runners the daemon builds over each plugin index. They share one process limit and differ
 * in their gate and in when shutdown aborts their scripts:
 *
 * | runner   | used by                         | gate      | aborted at stop              |
 * | -------- | ------------------------------- | --------- | ---------------------------- |
 * | `decide` | route, placement, tool pre      | consulted | last, after calls in flight  |
 * | `act`    | actions                         | consulted | at once                      |
 * | `fire`   | events, status change, tool post | event     | at once                      |
 *
 * @module
 */

import type { PluginIndex } from "../plugins/types.ts";
import type { Logger } from "../log.ts";
import { Runner } from "../hooks/runner.ts";
import type { Timeouts } from "../hooks/runner.ts";
import type { ProcLimit } from "./limits.ts";
import { PersistentHooks } from "./persistent.ts";

/** The runners of one snapshot. */
export interface DaemonRunners {
  /** Consulted calls: a caller waits on them within their deadline. */
  decide: Runner;
  /** Actions: a caller waits, but nothing depends on them at shutdown. */
  act: Runner;
  /** Fire-and-forget work. */
  fire: Runner;
  /** The persistent hooks' processes, asked by `decide` and told by `fire`. */
  persistent: PersistentHooks;
}

/** What the runners are built with. */
export interface RunnerSettings {
  limit: ProcLimit;
  /** Aborted last at stop: terminates consulted scripts still running. */
  decideSignal: AbortSignal;
  /** Aborted first at stop: terminates event and action scripts. */
  stopSignal: AbortSignal;
  hooksDir?: string;
  log: Logger;
  timeouts?: Partial<Timeouts>;
}

/**
 * Builds the runners over `index`. Cheap (no I/O): done once per reload.
 *
 * @param index The plugin index.
 * @param settings The shared limit, signals, hooks dir, logger, timeouts.
 * @returns The runners.
 * @example
 * ```ts
 * import { buildRunners } from "./runners.ts";
 * import { ProcLimit } from "./limits.ts";
 * import { silentLogger } from "../log.ts";
 * const signal = new AbortController().signal;
 * const runners = buildRunners({ dir: "/p", plugins: [], warnings: [] }, {
 *   limit: new ProcLimit(4), decideSignal: signal, stopSignal: signal, log: silentLogger,
 * });
 * console.assert(runners.fire.index.plugins.length === 0);
 * ```
 */
export function buildRunners(index: PluginIndex, settings: RunnerSettings): DaemonRunners {
  const common = { hooksDir: settings.hooksDir, log: settings.log, timeouts: settings.timeouts };
  const persistent = new PersistentHooks({ log: settings.log });
  return {
    persistent,
    decide: new Runner(index, {
      ...common,
      limit: settings.limit.consulted,
      signal: settings.decideSignal,
      ask: persistent.ask,
    }),
    act: new Runner(index, {
      ...common,
      limit: settings.limit.consulted,
      signal: settings.stopSignal,
    }),
    fire: new Runner(index, {
      ...common,
      limit: settings.limit.event,
      signal: settings.stopSignal,
      notify: persistent.ask,
    }),
  };
}
