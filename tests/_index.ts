/**
 * Test helpers for tests that call the library in process: plugin indexes built by hand over real
 * scripts in temp dirs (no loader), as the loader would build them, or loaded from a temp tree; a
 * logger that keeps its lines for assertions, and runners and tool hooks that log into one.
 */

import { join } from "node:path";
import type { Plugin, PluginIndex, PluginService } from "../lib/plugins/types.ts";
import { createLogger, type Logger, type LogLevel } from "../lib/log.ts";
import { Runner, type RunnerOptions } from "../lib/hooks/runner.ts";
import { ToolHooks, type ToolHooksOptions } from "../lib/consult/tool_hooks.ts";
import { loadPlugins } from "../lib/plugins/load.ts";
import { makeTree, tempDir, writeTree } from "./_cli.ts";

/** A plugin: `hooks` maps event -> script body, `actions` id -> script body. */
export interface PluginDraft {
  hooks?: Record<string, string>;
  actions?: Record<string, string>;
}

/** Writes each draft's scripts under a temp dir and returns the index the loader would build. */
export async function indexOf(drafts: Record<string, PluginDraft>): Promise<PluginIndex> {
  const root = await tempDir({ prefix: "tyhooks-index-" });
  const plugins: Plugin[] = [];
  for (const [name, draft] of Object.entries(drafts).sort(([a], [b]) => a.localeCompare(b))) {
    const dir = join(root, name);
    const files: Record<string, string> = {};
    const hooks: Record<string, string> = {};
    for (const [event, body] of Object.entries(draft.hooks ?? {})) {
      files[`${event}.sh`] = body;
      hooks[event] = join(dir, `${event}.sh`);
    }
    const actions = Object.entries(draft.actions ?? {}).map(([id, body]) => {
      files[`action-${id}.sh`] = body;
      return { id, label: id, command: join(dir, `action-${id}.sh`) };
    });
    await writeTree(dir, files);
    plugins.push(bare(name, dir, { hooks, actions }));
  }
  return { dir: root, plugins, warnings: [] };
}

/** The index {@linkcode loadPlugins} builds from a new temp tree of `files` (see `makeTree`). */
export async function loadTree(
  files: Record<string, string>,
): Promise<{ index: PluginIndex; root: string }> {
  const root = await makeTree(files);
  return { index: await loadPlugins(root), root };
}

/** A manifest's warnings or problems as `line:column message`, the form assertions compare. */
export function located(
  found: { line: number | null; column: number | null; message: string }[],
): string[] {
  return found.map((w) => `${w.line}:${w.column} ${w.message}`);
}

/** Plugin name -> event -> script text (starting with "#!"). */
export type PluginScripts = Record<string, Record<string, string>>;

/** Writes each plugin's hook scripts under a new temp dir and returns the index. */
export function pluginIndex(plugins: PluginScripts): Promise<PluginIndex> {
  return indexOf(
    Object.fromEntries(Object.entries(plugins).map(([name, hooks]) => [name, { hooks }])),
  );
}

/** Each plugin of `scripts` (plugin name -> script text) hooking `event` with its script. */
export function handling(event: string, scripts: Record<string, string>): PluginScripts {
  return Object.fromEntries(
    Object.entries(scripts).map(([name, script]) => [name, { [event]: script }]),
  );
}

/** A service as tests write it: name and command, the rest defaulted. */
export type ServiceInput = Pick<PluginService, "name" | "command"> & Partial<PluginService>;

/** A plugin dir in a fresh temp dir with `services`, as the loader would index it. */
export async function serviceIndex(
  services: ServiceInput[],
  plugin = "svc",
): Promise<{ index: PluginIndex; dir: string }> {
  const dir = await Deno.realPath(await tempDir({ prefix: "tyhooks-svc-" }));
  const defaulted = services.map((s): PluginService => ({
    cwd: dir,
    env: [],
    restart: "on-failure",
    ...s,
  }));
  return {
    index: { dir, warnings: [], plugins: [bare(plugin, dir, { services: defaulted })] },
    dir,
  };
}

function bare(name: string, dir: string, parts: Partial<Plugin>): Plugin {
  return {
    name,
    version: "",
    description: "",
    dir,
    hooks: {},
    actions: [],
    services: [],
    workflows: [],
    routines: [],
    ...parts,
  };
}

/** A fresh temp dir for scripts to leave traces in. */
export function traceDir(): Promise<string> {
  return tempDir({ prefix: "tyhooks-trace-" });
}

/** One log line, as the JSON logger writes it (`msg`), and when it was logged. */
export interface LogLine {
  level: LogLevel;
  msg: string;
  /** `msg` again. */
  message: string;
  /** `performance.now()` when it was logged. */
  at: number;
  [field: string]: unknown;
}

/** A logger at debug level that keeps every line, as the JSON logger words it. */
export function recordingLogger(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = createLogger({
    format: "json",
    level: "debug",
    write: (line) => {
      const parsed = JSON.parse(line);
      lines.push({ ...parsed, message: parsed.msg, at: performance.now() });
    },
  });
  return { log, lines };
}

/** A {@linkcode Runner} over `plugins` (see {@linkcode pluginIndex}), logging into `lines`. */
export async function recordingRunner(
  plugins: PluginScripts,
  options: Omit<RunnerOptions, "log"> = {},
): Promise<{ runner: Runner; lines: LogLine[] }> {
  const { log, lines } = recordingLogger();
  return { runner: new Runner(await pluginIndex(plugins), { ...options, log }), lines };
}

/** {@linkcode ToolHooks} over a {@linkcode recordingRunner}, its tool timeout `toolMs` if given. */
export async function toolHooks(
  plugins: PluginScripts,
  options: ToolHooksOptions & { toolMs?: number } = {},
): Promise<{ hooks: ToolHooks; lines: LogLine[] }> {
  const timeouts = options.toolMs ? { tool: options.toolMs } : {};
  const { runner, lines } = await recordingRunner(plugins, { timeouts });
  return { hooks: new ToolHooks(runner, options), lines };
}

/**
 * Waits until a plugin tree written just now can be cached: its paths are "racy" until the second
 * of their ctime (Deno gives ctime in whole seconds) and RACY_MS after it are over
 * (lib/plugins/cache.ts).
 */
export function settled(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1000 - Date.now() % 1000 + 30));
}
