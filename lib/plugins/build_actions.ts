/**
 * The forgiving reading of `actions`: each well-formed action whose script passes the checks is
 * kept, each other one is dropped with a problem.
 *
 * @module
 */

import { z } from "zod";
import type { PluginAction } from "./types.ts";
import { ActionSchema } from "./manifest_schema.ts";
import { describeIssue, dropped, kindOf, outsideDir, type Problem, quote } from "./messages.ts";
import { isRecord } from "../_util.ts";
import { checkScript, type PluginRoot } from "./script_path.ts";
import { hasControlCharacters } from "./dir_name.ts";

// The same fields as the strict schema, but unknown keys are ignored rather than refused: only
// `plugins validate` reports them.
const LooseAction = z.object(ActionSchema.shape);

/**
 * Reads the `actions` list. Requires `--allow-read`.
 *
 * @param raw The lenient value of `actions` (undefined or null when absent).
 * @returns The kept actions, the problems, and the notes only `plugins validate` reports.
 */
export function buildActions(
  root: PluginRoot,
  raw: unknown,
): { actions: PluginAction[]; problems: Problem[]; notes: Problem[] } {
  const actions: PluginAction[] = [];
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (raw === undefined || raw === null) return { actions, problems, notes };
  if (!Array.isArray(raw)) {
    const reason = `must be a list of actions, not ${kindOf(raw)}`;
    return { actions, problems: [dropped('"actions"', reason, ["actions"])], notes };
  }
  for (const [index, item] of raw.entries()) {
    const at = ["actions", index];
    const id = isRecord(item) && typeof item.id === "string" && item.id !== "" ? item.id : null;
    const what = id === null ? `action #${index + 1}` : `action ${quote(id)}`;
    const parsed = LooseAction.safeParse(withoutNulls(item), { reportInput: true });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push(dropped(what, describeIssue(issue), [...at, ...issue.path]));
      continue;
    }
    const action = parsed.data;
    if (hasControlCharacters(action.id) || hasControlCharacters(action.label ?? "")) {
      problems.push(
        dropped(`action #${index + 1}`, "its id or label contains control characters", at),
      );
      continue;
    }
    if (actions.some((a) => a.id === action.id)) {
      problems.push(dropped(what, "the id is already used by an earlier action", at));
      continue;
    }
    const check = checkScript(root, action.command);
    if (!check.ok) {
      const reason = `script ${quote(action.command)} ${check.reason}`;
      problems.push(dropped(what, reason, [...at, "command"], check.hint));
      continue;
    }
    if (check.unsafe) {
      const { reason, hint } = check.unsafe;
      const message = `Action ${quote(action.id)}: script ${quote(action.command)} ${reason}`;
      problems.push({ message: `${message} (hint: ${hint})`, at: [...at, "command"] });
    }
    if (check.outside !== null) {
      const message = outsideDir(
        `Action ${quote(action.id)}`,
        "script",
        action.command,
        check.outside,
      );
      notes.push({ message, at: [...at, "command"] });
    }
    actions.push({ id: action.id, label: action.label || action.id, command: check.path });
  }
  return { actions, problems, notes };
}

/**
 * A copy of a map without its null values: ty (Go) reads `label:` with nothing after it as an
 * absent field, and so does the forgiving loader.
 */
export function withoutNulls(value: unknown): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}
