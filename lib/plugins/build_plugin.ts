/**
 * The forgiving reading of a manifest's fields once it has a name: everything usable is kept,
 * everything else becomes a problem (not yet located in the text).
 *
 * @module
 */

import type { Plugin } from "./types.ts";
import { dropped, kindOf, type Problem } from "./messages.ts";
import type { PluginRoot } from "./script_path.ts";
import { buildHooks } from "./build_hooks.ts";
import { buildActions } from "./build_actions.ts";
import { buildServices } from "./build_services.ts";
import { dirNames, findRoutines, findWorkflows } from "./conventions.ts";
import { buildHookSettings } from "./hook_settings.ts";
import { isRecord } from "../_util.ts";

/** A plugin's contents, everything but its name. */
export type PluginParts = Omit<Plugin, "name">;

/**
 * Reads version, description, hooks, actions and services from the lenient data, the per-hook
 * settings from the typed data, and finds the workflows and routines. Requires `--allow-read`.
 *
 * @param data The manifest's lenient data (a map).
 * @param typed The manifest's typed data (YAML core types), for the `tyhooks:` settings; default
 *   `data`.
 * @returns The parts, the problems, and the notes only `plugins validate` reports.
 */
export function buildPlugin(
  root: PluginRoot,
  data: Record<string, unknown>,
  typed: unknown = data,
): { parts: PluginParts; problems: Problem[]; notes: Problem[] } {
  const problems: Problem[] = [];
  const text = (key: "version" | "description"): string => {
    const value = data[key];
    if (value === undefined || value === null) return "";
    // Shown by plugins list: control characters (NUL, terminal escapes) never reach a terminal.
    if (typeof value === "string") return value.replace(/\p{Cc}/gu, "");
    problems.push(dropped(`"${key}"`, `must be a string, not ${kindOf(value)}`, [key]));
    return "";
  };
  const version = text("version");
  const description = text("description");
  const hooks = buildHooks(root, data.hooks);
  const actions = buildActions(root, data.actions);
  const services = buildServices(root, data.services);
  const names = dirNames(root.dir);
  const workflows = findWorkflows(root.dir, names);
  const routines = findRoutines(root.dir, names);
  // Settings are typed (`persistent: true` is a boolean), unlike ty's string-minded fields.
  const settings = buildHookSettings(
    isRecord(typed) ? typed.tyhooks : undefined,
    isRecord(data.hooks) ? Object.keys(data.hooks) : [],
  );
  problems.push(
    ...hooks.problems,
    ...actions.problems,
    ...services.problems,
    ...settings.problems,
  );
  return {
    parts: {
      version,
      description,
      dir: root.dir,
      hooks: hooks.hooks,
      actions: actions.actions,
      services: services.services,
      workflows,
      routines,
      settings: settings.settings,
    },
    problems,
    notes: [...hooks.notes, ...actions.notes, ...services.notes],
  };
}

/**
 * Does the plugin handle anything at all?
 */
export function isUsable(
  parts: Pick<PluginParts, "hooks" | "actions" | "services" | "workflows" | "routines">,
): boolean {
  return Object.keys(parts.hooks).length + parts.actions.length + parts.services.length +
      parts.workflows.length + parts.routines.length > 0;
}
