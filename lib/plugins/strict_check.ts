/**
 * The strict half of `plugins validate`: the whole manifest against the strict zod schema
 * (unknown keys, wrong types), plus event names that look like typos of known ones.
 *
 * This module pulls in zod and yaml, so it is only ever imported dynamically.
 *
 * @module
 */

import type { LoadWarning } from "./types.ts";
import type { PluginReport } from "./inspect_plugin.ts";
import {
  ActionSchema,
  KNOWN_EVENTS,
  MANIFEST_KEYS,
  ManifestSchema,
  ServiceSchema,
} from "./manifest_schema.ts";
import { locate } from "./read_manifest.ts";
import { describeIssue, pathText, unknownEvent, unknownKey } from "./messages.ts";
import { closest, isRecord } from "../_util.ts";
import { SETTING_KEYS } from "./hook_settings.ts";

const ACTION_KEYS = Object.keys(ActionSchema.shape);
const SERVICE_KEYS = Object.keys(ServiceSchema.shape);

/**
 * Lints one parsed manifest strictly. Returns nothing for a manifest that could not be parsed
 * (the loader already said why).
 *
 * @returns The problems, each with a line and column.
 */
export function strictProblems(report: PluginReport): LoadWarning[] {
  const parsed = report.parsed;
  if (parsed === null) return [];
  const problems: LoadWarning[] = [];
  const add = (message: string, at: readonly PropertyKey[], key = false) => {
    const { line, column } = locate(parsed, at, { key });
    problems.push({ plugin: report.name, path: report.manifest, line, column, message });
  };
  const result = ManifestSchema.safeParse(parsed.typed, { reportInput: true });
  for (const issue of result.error?.issues ?? []) {
    if (issue.code !== "unrecognized_keys") {
      add(describeIssue(issue), issue.path);
      continue;
    }
    const known = issue.path.length === 0
      ? MANIFEST_KEYS
      : issue.path[0] === "actions"
      ? ACTION_KEYS
      : issue.path[0] === "tyhooks"
      ? SETTING_KEYS
      : SERVICE_KEYS;
    for (const key of issue.keys) {
      add(unknownKey(key, pathText(issue.path), closest(key, known)), [...issue.path, key], true);
    }
  }
  if (parsed.extraDocuments !== null) {
    const { count, line, column } = parsed.extraDocuments;
    problems.push({
      plugin: report.name,
      path: report.manifest,
      line,
      column,
      message: `plugin.yaml holds ${count} more YAML ${
        count === 1 ? "document" : "documents"
      } after the first, which ${count === 1 ? "is" : "are"} not read (as in ty)`,
    });
  }
  const typed = parsed.typed;
  if (isRecord(typed) && isRecord(typed.hooks)) {
    for (const event of Object.keys(typed.hooks)) {
      const suggestion = closest(event, KNOWN_EVENTS);
      if (suggestion !== undefined) add(unknownEvent(event, suggestion), ["hooks", event], true);
    }
  }
  return problems;
}
