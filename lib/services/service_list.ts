/**
 * What `services list` shows: every service of the index, as it would run, without starting
 * anything.
 *
 * @module
 */

import type { PluginIndex } from "../plugins/types.ts";
import type { ServiceEntry } from "./types.ts";

/**
 * The services of `index`, plugins in index order (by name), services in manifest order.
 *
 * @param index The plugin index.
 * @returns One entry per service.
 * @example
 * ```ts
 * import { listServices } from "./service_list.ts";
 * const index = { dir: "/p", warnings: [], plugins: [] };
 * console.assert(listServices(index).length === 0);
 * ```
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
