/**
 * What an endpoint handler gets: the request, its path parameters, the snapshot of the plugin
 * index taken when the request arrived, and the daemon's shared state.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import type { ServiceStatus } from "../services/schema.ts";
import type { EventQueue } from "./limits.ts";
import type { IndexHolder, Snapshot } from "./index_holder.ts";
import type { DaemonRunners } from "./runners.ts";

/**
 * The services the daemon supervises (`--services`): a `ServiceSet`.
 *
 * @example
 * ```ts
 * import { startServices } from "../services/service_set.ts";
 * import type { ServiceSupervisor } from "./context.ts";
 * const services: ServiceSupervisor = startServices({ dir: "/none", plugins: [], warnings: [] });
 * console.assert(services.status().length === 0);
 * await services.stop({ stopTimeoutMs: 1000 });
 * ```
 */
export interface ServiceSupervisor {
  /** Every service and its state. */
  status(): ServiceStatus[];
  /** SIGTERM to every group, SIGKILL after `stopTimeoutMs`. */
  stop(options?: { stopTimeoutMs?: number }): Promise<unknown>;
}

/** State shared by every request. */
export interface DaemonState {
  holder: IndexHolder<DaemonRunners>;
  events: EventQueue;
  /** Null without `--services`. */
  services: ServiceSupervisor | null;
  /** Set when the stop begins: requests arriving later get 503. */
  stopping: boolean;
  /** `performance.now()` at start. */
  startedAt: number;
  log: Logger;
}

/** One request, as a handler sees it. */
export interface Call {
  request: Request;
  url: URL;
  /** Decoded path parameters, e.g. `event`. */
  params: Record<string, string>;
  /** Taken when the request arrived; kept for the whole call. */
  snapshot: Snapshot<DaemonRunners>;
  daemon: DaemonState;
}

/** An endpoint's handler. */
export type Handler = (call: Call) => Promise<Response>;
