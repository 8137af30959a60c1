/**
 * The `plugins list --json` document (also `GET /v1/plugins`), built field by field so its shape
 * is exactly the one SPEC promises, whatever the index types grow.
 *
 * @module
 */

import type { LoadWarning, PluginIndex } from "./types.ts";

/**
 * One plugin in the listing.
 */
export interface PluginJson {
  /** The plugin's name. */
  name: string;
  /** From the manifest; empty when it has none. */
  version: string;
  /** From the manifest; empty when it has none. */
  description: string;
  /** Absolute plugin directory. */
  dir: string;
  /** Event -> absolute script path. */
  hooks: Record<string, string>;
  /** The usable actions. */
  actions: { id: string; label: string; command: string }[];
  /** The usable services. */
  services: { name: string; command: string; cwd: string; env: string[]; restart: string }[];
  /** Workflow names, sorted. */
  workflows: string[];
  /** Routine names, sorted. */
  routines: string[];
}

/**
 * The listing.
 */
export interface PluginListJson {
  /** The plugins, sorted by name. */
  plugins: PluginJson[];
  /** What was skipped or dropped while loading. */
  warnings: LoadWarning[];
}

/**
 * Builds the listing document from an index.
 *
 * @returns `{"plugins":[...],"warnings":[...]}`, every field present.
 * @example
 * ```ts
 * import { pluginListJson } from "./index_json.ts";
 * const doc = pluginListJson({ dir: "/p", plugins: [], warnings: [] });
 * console.assert(JSON.stringify(doc) === '{"plugins":[],"warnings":[]}');
 * ```
 */
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

/**
 * One warning or lint problem as JSON: `{"plugin","path","line","column","message"}`.
 */
export function warningJson(w: LoadWarning): LoadWarning {
  return { plugin: w.plugin, path: w.path, line: w.line, column: w.column, message: w.message };
}
