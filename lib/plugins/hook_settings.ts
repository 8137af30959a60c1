/**
 * Per-hook settings under the manifest's `tyhooks:` key (ty's loader ignores it, so `hooks:` stays
 * event -> script), read forgivingly: a bad setting is a problem and keeps its default. Loads
 * neither zod nor yaml (the warm path reads settings from the cached index). `tools` expressions
 * are RE2's, linear in the tool name: most run on tool_matcher.ts, the rest on `npm:re2js`, each
 * imported on first need.
 *
 * @module
 */

import type { HookSettings, Plugin } from "./types.ts";
import type { Problem } from "./messages.ts";
import { closest, kindOf, quoted } from "../text.ts";
import { isRecord } from "../wire/json.ts";
import { parseDuration } from "../async.ts";
import type { ToolMatcher } from "./tool_matcher.ts";
import { eventSpec, mayBePersistent, TOOL_EVENTS } from "../events.ts";

/** The settings a hook may have, as written in the manifest. */
export const SETTING_KEYS: readonly string[] = ["tools", "timeout", "persistent", "max_procs"];

/** A persistent hook's pool size when `max_procs` is not given. */
export const DEFAULT_POOL_SIZE = 1;

/** Reads `tyhooks:` into event -> valid settings; an event not among `hooked` is a problem. */
export async function buildHookSettings(
  raw: unknown,
  hooked: readonly string[],
): Promise<{ settings: Record<string, HookSettings>; problems: Problem[] }> {
  const settings: Record<string, HookSettings> = {};
  const problems: Problem[] = [];
  if (raw === undefined || raw === null) return { settings, problems };
  if (!isRecord(raw)) {
    const reason = `must be a map of event to settings, not ${kindOf(raw)}`;
    return { settings, problems: [ignored('"tyhooks"', reason, ["tyhooks"])] };
  }
  const compiled = await compileTools(raw);
  for (const [event, value] of Object.entries(raw)) {
    const at = ["tyhooks", event];
    const what = `settings of hook ${quoted(event)}`;
    if (!hooked.includes(event)) {
      problems.push(ignored(what, `the plugin has no hook ${quoted(event)}`, at, true));
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
      const problem = readSetting(hook, { event, key, value: setting, compiled });
      if (problem !== null) {
        const name = `setting ${quoted(key)} of hook ${quoted(event)}`;
        problems.push(ignored(name, problem.reason, [...at, key], problem.key, problem.hint));
      }
    }
    if (hook.maxProcs !== undefined && hook.persistent !== true) {
      const name = `setting "max_procs" of hook ${quoted(event)}`;
      problems.push(ignored(name, "only persistent hooks take it", [...at, "max_procs"], true));
      delete hook.maxProcs;
    }
    if (Object.keys(hook).length > 0) settings[event] = hook;
  }
  return { settings, problems };
}

type SettingProblem = { reason: string; key?: boolean; hint?: string };

// Each `tools` string in the settings, compiled ahead of the synchronous reading below.
async function compileTools(raw: Record<string, unknown>): Promise<Map<string, Compiled>> {
  const compiled = new Map<string, Compiled>();
  for (const value of Object.values(raw)) {
    if (isRecord(value) && typeof value.tools === "string" && value.tools !== "") {
      compiled.set(value.tools, await compile(value.tools));
    }
  }
  return compiled;
}

// Stores one valid setting in `hook`, or says why it is not one. `compiled` holds every
// non-empty `tools` string of the settings.
function readSetting(
  hook: HookSettings,
  { event, key, value, compiled }: {
    event: string;
    key: string;
    value: unknown;
    compiled: Map<string, Compiled>;
  },
): SettingProblem | null {
  switch (key) {
    case "tools": {
      if (!eventSpec(event).tools) {
        return { reason: `only tool hooks (${TOOL_EVENTS.join(", ")}) take it`, key: true };
      }
      if (typeof value !== "string" || value === "") {
        return { reason: `must be a regular expression, not ${kindOf(value)}` };
      }
      const matcher = compiled.get(value)!;
      if ("error" in matcher) {
        const reason = `${quoted(value)} is not a valid regular expression: ${matcher.error}`;
        return { reason, hint: matcher.hint };
      }
      hook.tools = value;
      return null;
    }
    case "timeout": {
      const ms = typeof value === "number" || typeof value === "string"
        ? parseDuration(String(value))
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
      if (value && !mayBePersistent(event)) {
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
        reason: `unknown setting${suggestion ? `, did you mean ${quoted(suggestion)}?` : ""}`,
        key: true,
      };
    }
  }
}

/** A plugin's settings for one hook (`{}` when it has none: every default). */
export function hookSettings(plugin: Pick<Plugin, "settings">, event: string): HookSettings {
  return plugin.settings?.[event] ?? {};
}

/** Is a tool hook with these settings asked about `tool` (its `tools` found in the name)? */
export async function toolMatches(settings: HookSettings, tool: string): Promise<boolean> {
  const source = settings.tools;
  if (source === undefined) return true;
  const matcher = await compile(source);
  // The loader keeps only expressions RE2 takes; were one not to compile, ask the hook.
  return "error" in matcher || matcher.test(tool);
}

type Compiled = ToolMatcher | { error: string; hint?: string };

const MAX_MATCHERS = 256;
const matchers = new Map<string, Compiled>();
let ownMatcher: Promise<typeof import("./tool_matcher.ts")> | undefined;

// Ours when it takes the expression, else RE2's, which also words why one is invalid. Once per
// expression and process: the loader's compiling serves the calls that follow.
async function compile(source: string): Promise<Compiled> {
  let compiled = matchers.get(source);
  if (compiled === undefined) {
    const { compileToolMatcher } = await (ownMatcher ??= import("./tool_matcher.ts"));
    compiled = compileToolMatcher(source) ?? (await loadEngine())(source);
    // A daemon's plugins may change many times; the few current expressions are what it needs.
    if (matchers.size >= MAX_MATCHERS) matchers.clear();
    matchers.set(source, compiled);
  }
  return compiled;
}

type Engine = typeof import("npm:re2js@^2.10.0");

// By its file URL when it has one: Deno's code cache never serves a package's entry module
// imported by its bare name, so each call would parse re2js's 260 kB afresh and write the cache
// again (about 15 ms of CPU a call). By name where no file URL is known or the import fails: the
// bundle carries it inline, and the name keeps it in the graph that `deno compile` embeds.
function importEngine(): Promise<Engine> {
  let url: string | undefined;
  try {
    url = import.meta.resolve("npm:re2js@^2.10.0");
  } catch {
    // Not resolvable here (the bundle has no import map): by name, below.
  }
  const byName = () => import("npm:re2js@^2.10.0");
  return url?.startsWith("file:") ? (import(url) as Promise<Engine>).catch(byName) : byName();
}

/** Compiles an expression on RE2, or says in its words why it is not one. */
type Compile = (source: string) => Compiled;

// What RE2 leaves out on purpose, and JavaScript users reach for: lookaround, backreferences,
// possessive repeats.
const NOT_IN_RE2 = new Set([
  "invalid or unsupported Perl syntax",
  "invalid escape sequence",
  "invalid nested repetition operator",
]);

let engine: Promise<Compile> | undefined;

function loadEngine(): Promise<Compile> {
  return engine ??= importEngine().then(({ RE2JS, RE2JSSyntaxException }) => (source) => {
    try {
      return RE2JS.compile(source);
    } catch (error) {
      if (!(error instanceof RE2JSSyntaxException)) {
        return { error: error instanceof Error ? error.message : String(error) };
      }
      const what = error.getDescription();
      const at = error.getPattern();
      return {
        error: at ? `${what}: ${quoted(at)}` : what,
        hint: NOT_IN_RE2.has(what)
          ? "tools are RE2 expressions: no lookaround, backreferences or possessive repeats"
          : undefined,
      };
    }
  });
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
  if (typeof value === "string") return quoted(value);
  if (typeof value === "number" || typeof value === "boolean") return String(value);
  return kindOf(value);
}
