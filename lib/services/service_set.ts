/**
 * The services of a plugin index: listing them (`services list`), supervising them all at once,
 * and stopping them all within one stop timeout.
 *
 * @module
 */

import type { PluginIndex } from "../plugins/types.ts";
import {
  DEFAULT_STOP_TIMEOUT_MS,
  safeLogger,
  Supervisor,
  type SupervisorOptions,
} from "./supervisor.ts";
import type { ServiceEntry, ServiceStatus } from "../wire/services.ts";

/**
 * The services of `index` as they would run, without starting anything: plugins in index order
 * (by name), services in manifest order.
 */
export function listServices(index: PluginIndex): ServiceEntry[] {
  return index.plugins.flatMap((plugin) =>
    plugin.services.map((s) => ({
      plugin: plugin.name,
      name: s.name,
      command: s.command,
      cwd: s.cwd,
      restart: s.restart,
    }))
  );
}

/** Options of {@linkcode startServices}: see {@linkcode SupervisorOptions}. */
export type ServiceSetOptions = SupervisorOptions;

/** Options of {@linkcode ServiceSet.stop}. */
export interface StopOptions {
  /** How long the groups get between SIGTERM and SIGKILL; default 5 s. */
  stopTimeoutMs?: number;
}

/**
 * The supervised services of a plugin index. Made by {@linkcode startServices}.
 *
 * @example
 * ```ts
 * import { startServices } from "./service_set.ts";
 * const set = startServices({ dir: "/none", plugins: [], warnings: [] });
 * console.assert(set.size === 0);
 * await set.stop();
 * ```
 */
export class ServiceSet {
  #supervisors: Supervisor[];
  #options: ServiceSetOptions;

  /** Starts every service of `index` at once; {@linkcode startServices} says how. */
  constructor(index: PluginIndex, options: ServiceSetOptions = {}) {
    this.#options = options;
    this.#supervisors = index.plugins.flatMap((plugin) =>
      plugin.services.map((service) => new Supervisor(plugin.name, service, options))
    );
  }

  /** How many services are supervised. */
  get size(): number {
    return this.#supervisors.length;
  }

  /** Resolves when every service's supervision has ended on its own or by `stop()`. */
  get done(): Promise<void> {
    return Promise.all(this.#supervisors.map((s) => s.done)).then(() => {});
  }

  /** The status of each service, plugins by name, services in manifest order. */
  status(): ServiceStatus[] {
    return this.#supervisors.map((supervisor) => supervisor.status());
  }

  /**
   * Stops every service at once (SIGTERM, SIGKILL after `stopTimeoutMs`); returns within that
   * plus about 150 ms, with no process of any group left.
   */
  async stop(options: StopOptions = {}): Promise<void> {
    const stopTimeoutMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
    if (this.size > 0) {
      safeLogger(this.#options.log).log("info", `Stopping ${this.size} service(s)`, {
        stop_timeout_ms: stopTimeoutMs,
      });
    }
    await Promise.all(this.#supervisors.map((s) => s.stop({ stopTimeoutMs })));
  }
}

/**
 * Starts supervising every service of `index` as SPEC's "Services" says (`sh -c` in its own
 * group, restarted per its policy with backoff, output lines to `options.output`); end it all
 * with {@linkcode ServiceSet.stop}. Requires `--allow-run`, `--allow-env`, `--allow-read`.
 *
 * @example
 * ```ts
 * import { startServices } from "./service_set.ts";
 * const service = { name: "web", command: "sleep 30", cwd: "/tmp", env: ["FOO=bar"], restart: "on-failure" as const };
 * const plugin = { name: "demo", version: "", description: "", dir: "/tmp", hooks: {}, actions: [],
 *   services: [service], workflows: [], routines: [] };
 * const set = startServices({ dir: "/tmp", plugins: [plugin], warnings: [] }, { env: { TY_API_URL: "http://127.0.0.1:7000" } });
 * console.assert(set.status()[0].pid !== null);
 * await set.stop({ stopTimeoutMs: 1000 });
 * ```
 */
export function startServices(index: PluginIndex, options: ServiceSetOptions = {}): ServiceSet {
  return new ServiceSet(index, options);
}
