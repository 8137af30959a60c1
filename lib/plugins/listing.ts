/**
 * What `plugins list` and `plugins validate` show: the `plugins list --json` document (also
 * `GET /v1/plugins`), built field by field so its shape is exactly the one SPEC promises, whatever
 * the index types grow; and the legacy hooks dir beside the plugins.
 *
 * @module
 */

import { join } from "../paths.ts";
import type { LoadWarning, Plugin, PluginIndex } from "./types.ts";
import { closest, quoted } from "../text.ts";
import { cannotStart } from "./messages.ts";
import { TASK_EVENTS } from "../events.ts";

/** One plugin in the listing: the plugin but its hook settings. */
export type PluginJson = Omit<Plugin, "settings">;

/** The listing. */
export interface PluginListJson {
  /** The plugins, sorted by name. */
  plugins: PluginJson[];
  /** What was skipped or dropped while loading. */
  warnings: LoadWarning[];
}

/** The listing document of an index, every field present. */
export function pluginListJson(index: PluginIndex): PluginListJson {
  return {
    plugins: index.plugins.map((p) => ({
      name: p.name,
      version: p.version,
      description: p.description,
      dir: p.dir,
      hooks: { ...p.hooks },
      actions: p.actions.map((a) => ({ id: a.id, label: a.label, command: a.command })),
      services: p.services.map((s) => ({
        name: s.name,
        command: s.command,
        cwd: s.cwd,
        env: [...s.env],
        restart: s.restart,
      })),
      workflows: [...p.workflows],
      routines: [...p.routines],
    })),
    warnings: index.warnings.map(warningJson),
  };
}

/** One warning or lint problem as JSON: `{"plugin","path","line","column","message"}`. */
export function warningJson(w: LoadWarning): LoadWarning {
  return { plugin: w.plugin, path: w.path, line: w.line, column: w.column, message: w.message };
}

// The legacy hooks dir (`<config>/task/hooks/<event>`, ty's first hook system) as `plugins list`
// and `plugins validate` show it: which events have a hook, and what would keep one from running.

/** One file in the hooks dir. */
export interface LegacyHook {
  /** The event it answers: its file name. */
  event: string;
  /** Absolute path. */
  path: string;
  /** True when it is a regular, executable file (so it will run). */
  runnable: boolean;
}

/** The hooks dir's contents and problems. */
export interface LegacyHooks {
  /** The hooks dir. */
  dir: string;
  /** Its files, sorted by name. */
  hooks: LegacyHook[];
  /** What would keep a hook from running, or a name that looks like a typo of an event. */
  problems: LoadWarning[];
}

/** Reads the legacy hooks dir (see `hooksDir()`); a missing dir holds no hooks. */
export async function readLegacyHooks(dir: string): Promise<LegacyHooks> {
  const hooks: LegacyHook[] = [];
  const problems: LoadWarning[] = [];
  const problem = (path: string, message: string) =>
    problems.push({ plugin: null, path, line: null, column: null, message });
  let entries: Deno.DirEntry[];
  try {
    entries = await Array.fromAsync(Deno.readDir(dir));
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      problem(dir, `Cannot read the legacy hooks dir: ${(error as Error).message}`);
    }
    return { dir, hooks, problems };
  }
  entries.sort((a, b) => a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  for (const entry of entries) {
    if (entry.name.startsWith(".")) continue;
    const path = join(dir, entry.name);
    const info = await Deno.stat(path).catch(() => null);
    const runnable = info !== null && info.isFile && ((info.mode ?? 0o111) & 0o111) !== 0;
    hooks.push({ event: entry.name, path, runnable });
    if (!TASK_EVENTS.includes(entry.name)) {
      // Any event name may be fired (a README may sit there too): only a near miss of a known
      // event is a problem.
      const near = closest(entry.name, TASK_EVENTS);
      if (near !== undefined) {
        problem(path, `Legacy hook "${entry.name}" is not a known event: did you mean "${near}"?`);
      }
    } else if (info === null) problem(path, `Legacy hook "${entry.name}" is a dangling link`);
    else if (!info.isFile) problem(path, `Legacy hook "${entry.name}" is not a regular file`);
    else if (!runnable) {
      const hint = `hint: chmod +x ${quoted(path)}`;
      problem(path, `Legacy hook "${entry.name}" is not executable: it will not run (${hint})`);
    } else {
      const { execFormatProblem } = await import("../process/group.ts");
      const start = execFormatProblem(path);
      if (start !== null) {
        problem(path, cannotStart(`Legacy hook ${quoted(entry.name)}`, path, start));
      }
    }
  }
  return { dir, hooks, problems };
}
