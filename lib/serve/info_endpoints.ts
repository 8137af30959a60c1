/**
 * The read-only endpoints: `GET /v1/health`, `GET /v1/plugins`, `GET /v1/services`.
 *
 * @module
 */

import { VERSION } from "../version.ts";
import type { Call } from "./context.ts";
import { json } from "./http.ts";

/**
 * `GET /v1/health` -> `{"ok":true,"version","plugins","uptime_s"}` (`plugins` is the count).
 *
 * @example
 * ```ts
 * import { health } from "./info_endpoints.ts";
 * console.assert(typeof health === "function");
 * ```
 */
export function health(call: Call): Promise<Response> {
  return Promise.resolve(json(200, {
    ok: true,
    version: VERSION,
    plugins: call.snapshot.index.plugins.length,
    uptime_s: Math.floor((performance.now() - call.daemon.startedAt) / 1000),
  }));
}

/**
 * `GET /v1/plugins` -> the `plugins list --json` document, built by the same function.
 *
 * @example
 * ```ts
 * import { plugins } from "./info_endpoints.ts";
 * console.assert(typeof plugins === "function");
 * ```
 */
export async function plugins(call: Call): Promise<Response> {
  const { pluginListJson } = await import("../plugins/index_json.ts");
  return json(200, pluginListJson(call.snapshot.index));
}

/**
 * `GET /v1/services` -> `{"services":[{"plugin","name","state","pid","restarts","last_exit"}]}`;
 * an empty list when the daemon runs without `--services`.
 *
 * @example
 * ```ts
 * import { services } from "./info_endpoints.ts";
 * console.assert(typeof services === "function");
 * ```
 */
export function services(call: Call): Promise<Response> {
  const list = (call.daemon.services?.status() ?? []).map((s) => ({
    plugin: s.plugin,
    name: s.name,
    state: s.state,
    pid: s.pid,
    restarts: s.restarts,
    last_exit: s.last_exit,
  }));
  return Promise.resolve(json(200, { services: list }));
}
