/**
 * The `plugins list --json` document (also `GET /v1/plugins`), built field by field so its shape
 * is exactly the one SPEC promises, whatever the index types grow.
 *
 * @module
 */

import type { LoadWarning, PluginIndex } from "./types.ts";

/** One plugin in the listing. */
export interface PluginJson {
  name: string;
  version: string;
  description: string;
  dir: string;
  hooks: Record<string, string>;
  actions: { id: string; label: string; command: string }[];
  services: { name: string; command: string; cwd: string; env: string[]; restart: string }[];
  workflows: string[];
  routines: string[];
}

/** The listing. */
export interface PluginListJson {
  plugins: PluginJson[];
  warnings: LoadWarning[];
}

/**
 * Builds the listing document from an index.
 *
 * @param index The loaded index.
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
 *
 * @example
 * ```ts
 * import { warningJson } from "./index_json.ts";
 * const w = warningJson({ plugin: null, path: "/p", line: null, column: null, message: "m" });
 * console.assert(Object.keys(w).join() === "plugin,path,line,column,message");
 * ```
 */
export function warningJson(w: LoadWarning): LoadWarning {
  return { plugin: w.plugin, path: w.path, line: w.line, column: w.column, message: w.message };
}
