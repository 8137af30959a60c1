/**
 * Per-hook settings, the manifest's top-level `tyhooks:` key (a tyhooks extension that ty's
 * loader ignores, so `hooks:` stays event -> script): reading them forgivingly, and the two
 * questions the callers ask of them. Each bad setting is a problem naming it and is ignored, so
 * the hook keeps that default; the hook's other settings still apply.
 *
 * This module loads neither zod nor yaml: the warm path reads settings from the cached index.
 *
 * @module
 */

import type { HookSettings, Plugin } from "./types.ts";
import { kindOf, type Problem, quote } from "./messages.ts";
import { closest, isRecord } from "../_util.ts";
import { parseDuration } from "../_timers.ts";

/** The settings a hook may have, as written in the manifest. */
export const SETTING_KEYS: readonly string[] = ["tools", "timeout", "persistent", "max_procs"];

/** The events whose hooks judge tool calls, the only ones that take `tools`. */
export const TOOL_EVENTS: readonly string[] = ["pre_tool_call", "post_tool_call"];

/** A persistent hook's pool size when `max_procs` is not given. */
export const DEFAULT_MAX_PROCS = 1;

// task.route answers KEY=VALUE lines, not one JSON line, so it cannot be a persistent hook.
const NOT_PERSISTENT = new Set(["task.route"]);

/**
 * Reads the typed value of `tyhooks:` into event -> settings (events with no valid setting left
 * out). Events not among `hooked` (as written in `hooks:`), unknown settings and invalid values
 * are problems.
 */
export function buildHookSettings(
  raw: unknown,
  hooked: readonly string[],
): { settings: Record<string, HookSettings>; problems: Problem[] } {
  const settings: Record<string, HookSettings> = {};
  const problems: Problem[] = [];
  if (raw === undefined || raw === null) return { settings, problems };
  if (!isRecord(raw)) {
    const reason = `must be a map of event to settings, not ${kindOf(raw)}`;
    return { settings, problems: [ignored('"tyhooks"', reason, ["tyhooks"])] };
  }
  for (const [event, value] of Object.entries(raw)) {
    const at = ["tyhooks", event];
    const what = `settings of hook ${quote(event)}`;
    if (!hooked.includes(event)) {
      problems.push(ignored(what, `the plugin has no hook ${quote(event)}`, at, true));
      continue;
    }
    if (value === null || value === undefined) continue;
    if (!isRecord(value)) {
      const reason = `must be a map of setting to value, not ${kindOf(value)}`;
      problems.push(ignored(what, reason, at));
      continue;
    }
    const hook: HookSettings = {};
    for (const [key, setting] of Object.entries(value)) {
      const problem = readSetting(hook, event, key, setting);
      if (problem !== null) {
        const name = `setting ${quote(key)} of hook ${quote(event)}`;
        problems.push(ignored(name, problem.reason, [...at, key], problem.key, problem.hint));
      }
    }
    if (hook.maxProcs !== undefined && hook.persistent !== true) {
      const name = `setting "max_procs" of hook ${quote(event)}`;
      problems.push(ignored(name, "only persistent hooks take it", [...at, "max_procs"], true));
      delete hook.maxProcs;
    }
    if (Object.keys(hook).length > 0) settings[event] = hook;
  }
  return { settings, problems };
}

type SettingProblem = { reason: string; key?: boolean; hint?: string };

// Stores one valid setting in `hook`, or says why it is not one.
function readSetting(
  hook: HookSettings,
  event: string,
  key: string,
  value: unknown,
): SettingProblem | null {
  switch (key) {
    case "tools": {
      if (!TOOL_EVENTS.includes(event)) {
        return { reason: `only tool hooks (${TOOL_EVENTS.join(", ")}) take it`, key: true };
      }
      if (typeof value !== "string" || value === "") {
        return { reason: `must be a regular expression, not ${kindOf(value)}` };
      }
      try {
        new RegExp(value);
      } catch (error) {
        return { reason: `${quote(value)} is not a valid regular expression: ${messageOf(error)}` };
      }
      hook.tools = value;
      return null;
    }
    case "timeout": {
      const ms = typeof value === "number"
        ? parseDuration(String(value))
        : typeof value === "string"
        ? parseDuration(value)
        : undefined;
      if (ms === undefined || ms <= 0) {
        return {
          reason: `${describe(value)} is not a duration`,
          hint: "500ms, 15s, 2m or plain seconds, more than 0 and at most 24 days",
        };
      }
      hook.timeoutMs = ms;
      return null;
    }
    case "persistent":
      if (typeof value !== "boolean") {
        return { reason: `must be true or false, not ${describe(value)}` };
      }
      if (value && NOT_PERSISTENT.has(event)) {
        return { reason: "only hooks that answer in JSON can be persistent" };
      }
      hook.persistent = value;
      return null;
    case "max_procs":
      if (typeof value !== "number" || !Number.isSafeInteger(value) || value < 1) {
        return { reason: `must be a whole number of at least 1, not ${describe(value)}` };
      }
      hook.maxProcs = value;
      return null;
    default: {
      const suggestion = closest(key, SETTING_KEYS);
      return {
        reason: `unknown setting${suggestion ? `, did you mean ${quote(suggestion)}?` : ""}`,
        key: true,
      };
    }
  }
}

/** A plugin's settings for one hook (`{}` when it has none: every default). */
export function hookSettings(plugin: Pick<Plugin, "settings">, event: string): HookSettings {
  return plugin.settings?.[event] ?? {};
}

/**
 * Is a tool hook with these settings asked about `tool`? True when it has no `tools` setting;
 * else the expression is searched for in the tool name (anchor it with `^…$` to match whole
 * names, as in `^(bash|write_file)$`).
 */
export function toolMatches(settings: HookSettings, tool: string): boolean {
  if (settings.tools === undefined) return true;
  try {
    return new RegExp(settings.tools).test(tool);
  } catch {
    // Only a hand-edited index could hold an invalid expression: ask the hook, as with none.
    return true;
  }
}

function ignored(
  what: string,
  reason: string,
  at: readonly PropertyKey[],
  key = false,
  hint?: string,
): Problem {
  return { message: `Ignored ${what}: ${reason}${hint ? ` (hint: ${hint})` : ""}`, at, key };
}

function describe(value: unknown): string {
  if (typeof value === "string") return quote(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return kindOf(value);
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
