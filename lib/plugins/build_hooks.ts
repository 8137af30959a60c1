/**
 * The forgiving reading of `hooks`: each event whose script passes the checks is kept, each
 * other one is dropped with a problem.
 *
 * @module
 */

import { HooksSchema } from "./manifest_schema.ts";
import { dropped, kindOf, outsideDir, type Problem, quote } from "./messages.ts";
import { isRecord } from "../_util.ts";
import { checkScript, type PluginRoot } from "./script_path.ts";
import { hasControlCharacters } from "./dir_name.ts";

/**
 * Reads the `hooks` map. Requires `--allow-read`.
 *
 * @param raw The lenient value of `hooks` (undefined or null when absent).
 * @returns Event -> absolute script path, the problems, and the notes only `plugins validate`
 *   reports (scripts outside the plugin dir).
 */
export function buildHooks(
  root: PluginRoot,
  raw: unknown,
): { hooks: Record<string, string>; problems: Problem[]; notes: Problem[] } {
  const hooks: Record<string, string> = {};
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (raw === undefined || raw === null) return { hooks, problems, notes };
  if (!isRecord(raw)) {
    const reason = `must be a map of event to script, not ${kindOf(raw)}`;
    return { hooks, problems: [dropped('"hooks"', reason, ["hooks"])], notes };
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
      const check = checkScript(root, script as string);
      if (check.ok) {
        hooks[event] = check.path;
        if (check.unsafe) {
          const { reason, hint } = check.unsafe;
          const message = `Hook ${quote(event)}: script ${quote(script as string)} ${reason}`;
          problems.push({ message: `${message} (hint: ${hint})`, at });
        }
        if (check.outside !== null) {
          const message = outsideDir(
            `Hook ${quote(event)}`,
            "script",
            script as string,
            check.outside,
          );
          notes.push({ message, at });
        }
      } else {problems.push(
          dropped(what, `script ${quote(script as string)} ${check.reason}`, at, check.hint),
        );}
    }
  }
  return { hooks, problems, notes };
}
