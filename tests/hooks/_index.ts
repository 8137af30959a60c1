/** Builds a plugin index by hand (no loader), for Runner tests. */

import { join } from "node:path";
import type { Plugin, PluginIndex } from "../../lib/plugins/types.ts";
import { tempDir, writeTree } from "../_cli.ts";

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
    plugins.push({
      name,
      version: "",
      description: "",
      dir,
      hooks,
      actions,
      services: [],
      workflows: [],
      routines: [],
    });
  }
  return { dir: root, plugins, warnings: [] };
}
