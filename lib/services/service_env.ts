/**
 * The environment a service starts with: the parent's (inherited), then the injected pairs
 * (`--env`, with `TY_DB_PATH`/`TY_API_URL` passed through from tyhooks' own environment), then
 * the service's own `env` entries. Later wins.
 *
 * @module
 */

import type { PluginService } from "../plugins/types.ts";

/** A variable name a shell accepts: letters, digits and `_`, not starting with a digit. */
export const ENV_KEY = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** Variables ty's daemon gives its services; tyhooks passes its own values through. */
export const PASSED_THROUGH = ["TY_DB_PATH", "TY_API_URL"] as const;

/**
 * Splits `KEY=VALUE` at the first `=`.
 *
 * @param entry The entry.
 * @returns The pair, or null when there is no `=` or the key is not a valid name.
 * @example
 * ```ts
 * import { parseEnvEntry } from "./service_env.ts";
 * console.assert(parseEnvEntry("A=b=c")?.[1] === "b=c");
 * console.assert(parseEnvEntry("1A=x") === null);
 * ```
 */
export function parseEnvEntry(entry: string): [string, string] | null {
  const at = entry.indexOf("=");
  if (at <= 0) return null;
  const key = entry.slice(0, at);
  return ENV_KEY.test(key) ? [key, entry.slice(at + 1)] : null;
}

/**
 * The variables set for `service` on top of the inherited environment. NUL bytes, which no
 * environment can hold, are removed rather than failing the start.
 *
 * Requires `--allow-env` for `TY_DB_PATH` and `TY_API_URL`.
 *
 * @param service The service.
 * @param injected Pairs given by the caller (`--env`); they override the passed-through ones.
 * @returns The variables to add.
 * @example
 * ```ts
 * import { serviceEnv } from "./service_env.ts";
 * const env = serviceEnv(
 *   { name: "s", command: "true", cwd: "/", env: ["FOO=bar"], restart: "never" },
 *   { FOO: "injected", TY_API_URL: "http://127.0.0.1:7000" },
 * );
 * console.assert(env.FOO === "bar" && env.TY_API_URL === "http://127.0.0.1:7000");
 * ```
 */
export function serviceEnv(
  service: PluginService,
  injected: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, injected);
  for (const entry of service.env) {
    const pair = parseEnvEntry(entry);
    if (pair !== null) env[pair[0]] = pair[1];
  }
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k.replaceAll("\0", ""), v.replaceAll("\0", "")]),
  );
}
