/**
 * What a `task.route` handler prints: `KEY=VALUE` lines, parsed exactly as ty parses them.
 *
 * @module
 */

/**
 * A routing decision as one router printed it.
 *
 * @example
 * ```ts
 * import { parseRouteOutput, type RouteDecision } from "./route_output.ts";
 * const decision: RouteDecision = parseRouteOutput("CLAUDE_CONFIG_DIR=~/.claude-work\n");
 * console.assert(decision.claude_config_dir === "~/.claude-work" && !decision.hold);
 * ```
 */
export interface RouteDecision {
  /** `CLAUDE_CONFIG_DIR`: the profile the task runs under; empty when not named. */
  claude_config_dir: string;
  /** `HOLD` or `DEFER` was truthy: the task waits instead of starting. */
  hold: boolean;
  /** `REASON`: why, for people reading logs. */
  reason: string;
}

const TRUTHY = new Set(["1", "true", "yes", "y", "on"]);

/**
 * Parses a router's stdout. Blank lines and `#` comments are skipped, lines without `=` are
 * ignored, CRLF is accepted; keys are trimmed and case-insensitive; values are trimmed, then one
 * pair of surrounding quotes (`'…'` or `"…"`) is stripped. Known keys: `CLAUDE_CONFIG_DIR`,
 * `HOLD` or `DEFER` (truthy: 1, true, yes, y, on, any case), `REASON`; others are ignored. When a
 * key repeats, the last line wins; `HOLD` and `DEFER` are two names of one key.
 *
 * The result may be empty (see {@linkcode isEmptyDecision}): a router that only gives a reason
 * has not decided anything.
 *
 * @param stdout The router's standard output.
 * @returns The decision it printed.
 * @example
 * ```ts
 * import { parseRouteOutput } from "./route_output.ts";
 * const d = parseRouteOutput('# pick a profile\r\nclaude_config_dir = "/p/work"\r\nReason=busy\r\n');
 * console.assert(d.claude_config_dir === "/p/work" && d.reason === "busy" && !d.hold);
 * ```
 */
export function parseRouteOutput(stdout: string): RouteDecision {
  const decision: RouteDecision = { claude_config_dir: "", hold: false, reason: "" };
  for (const raw of stdout.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const eq = line.indexOf("=");
    if (eq === -1) continue;
    const key = line.slice(0, eq).trim().toUpperCase();
    const value = unquote(line.slice(eq + 1).trim());
    if (key === "CLAUDE_CONFIG_DIR") decision.claude_config_dir = value;
    else if (key === "HOLD" || key === "DEFER") decision.hold = TRUTHY.has(value.toLowerCase());
    else if (key === "REASON") decision.reason = value;
  }
  return decision;
}

/**
 * True when a decision neither holds the task nor names a config dir: the next router is asked.
 *
 * @param decision A parsed decision.
 * @returns Whether it decides nothing.
 * @example
 * ```ts
 * import { isEmptyDecision, parseRouteOutput } from "./route_output.ts";
 * console.assert(isEmptyDecision(parseRouteOutput("REASON=just saying\n")));
 * console.assert(!isEmptyDecision(parseRouteOutput("DEFER=yes\n")));
 * ```
 */
export function isEmptyDecision(decision: RouteDecision): boolean {
  return !decision.hold && decision.claude_config_dir === "";
}

// One pair only: `"'x'"` keeps its inner quotes, as ty does.
function unquote(value: string): string {
  if (value.length < 2) return value;
  const first = value[0];
  if ((first === '"' || first === "'") && value.endsWith(first)) return value.slice(1, -1);
  return value;
}
