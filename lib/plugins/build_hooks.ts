/**
 * The forgiving reading of `hooks`: each event whose script passes the checks is kept, each
 * other one is dropped with a problem.
 *
 * @module
 */

import { HooksSchema } from "./manifest_schema.ts";
import { dropped, type Problem, quote } from "./messages.ts";
import { kindOf } from "./issues.ts";
import { isRecord } from "./_record.ts";
import { checkScript, type PluginRoot } from "./script_path.ts";
import { hasControlCharacters } from "./dir_name.ts";

/**
 * Reads the `hooks` map. Requires `--allow-read`.
 *
 * @param root The plugin dir.
 * @param raw The lenient value of `hooks` (undefined or null when absent).
 * @returns Event -> absolute script path, and the problems.
 * @example
 * ```ts
 * import { buildHooks } from "./build_hooks.ts";
 * const { hooks, problems } = await buildHooks({ dir: "/tmp", realDir: "/tmp" }, { x: "../y" });
 * console.assert(Object.keys(hooks).length === 0 && problems.length === 1);
 * ```
 */
export async function buildHooks(
  root: PluginRoot,
  raw: unknown,
): Promise<{ hooks: Record<string, string>; problems: Problem[] }> {
  const hooks: Record<string, string> = {};
  const problems: Problem[] = [];
  if (raw === undefined || raw === null) return { hooks, problems };
  if (!isRecord(raw)) {
    const reason = `must be a map of event to script, not ${kindOf(raw)}`;
    return { hooks, problems: [dropped('"hooks"', reason, ["hooks"])] };
  }
  // Entries are checked one after another: a plugin's own hooks are few, and the loader already
  // runs many plugins at once.
  for (const [event, script] of Object.entries(raw)) {
    const what = `hook ${quote(event)}`;
    const at = ["hooks", event];
    if (hasControlCharacters(event)) {
      problems.push(
        dropped(`hook ${JSON.stringify(event)}`, "the event name contains control characters", at),
      );
      continue;
    }
    if (!HooksSchema.keyType.safeParse(event).success) {
      problems.push(dropped(what, "the event name is empty", at));
    } else if (!HooksSchema.valueType.safeParse(script).success) {
      const reason = `the script must be a path, not ${kindOf(script)}`;
      problems.push(dropped(what, typeof script === "string" ? "the script is empty" : reason, at));
    } else {
      const check = await checkScript(root, script as string);
      if (check.ok) hooks[event] = check.path;
      else {problems.push(
          dropped(what, `script ${quote(script as string)} ${check.reason}`, at, check.hint),
        );}
    }
  }
  return { hooks, problems };
}
