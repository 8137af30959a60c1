/**
 * `plugins remove` as a library call: delete one plugin's own folder, found by name anywhere in
 * the plugins dir (also inside a collection), and nothing else.
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { loadPlugins } from "./load.ts";
import { isInside } from "./script_path.ts";

/**
 * Removes the plugin called `name`. A symlinked plugin loses its link, never its target.
 * Requires `--allow-read` and `--allow-write`.
 *
 * @param pluginsDir The plugins dir.
 * @param name The plugin's name (as `plugins list` shows it).
 * @returns The folder that was removed.
 * @throws {RunError} When no loaded plugin has that name.
 * @example
 * ```ts ignore
 * import { removePlugin } from "./remove.ts";
 * console.log(await removePlugin("/home/me/.config/task/plugins", "tracker"));
 * ```
 */
export async function removePlugin(pluginsDir: string, name: string): Promise<string> {
  const index = await loadPlugins(pluginsDir);
  const plugin = index.plugins.find((p) => p.name === name);
  if (plugin === undefined) {
    throw new RunError(
      `No plugin named ${JSON.stringify(name)} in ${JSON.stringify(index.dir)}: ` +
        `see "tyhooks plugins list"`,
    );
  }
  // Discovery only yields folders below the plugins dir; checked again before deleting anything.
  if (plugin.dir === index.dir || !isInside(index.dir, plugin.dir)) {
    throw new RunError(
      `Refusing to remove ${JSON.stringify(plugin.dir)}: not inside the plugins dir`,
    );
  }
  await Deno.remove(plugin.dir, { recursive: true });
  return plugin.dir;
}
