/**
 * The forgiving reading of `services`: each well-formed service is kept, each other one is
 * dropped whole with a problem. A service is never started with a configuration other than the
 * one written, so a bad `restart` value or env KEY drops the service rather than the value; the
 * one exception is ty's: an `env` entry without `=` is skipped with a warning and the service
 * kept, as ty keeps it.
 *
 * @module
 */

import { z } from "zod";
import type { PluginService } from "./types.ts";
import { ENV_ENTRY, ServiceSchema } from "./manifest_schema.ts";
import { describeIssue, dropped, kindOf, outsideDir, type Problem, quote } from "./messages.ts";
import { isRecord } from "../_util.ts";
import { withoutNulls } from "./build_actions.ts";
import { checkCwd, type PluginRoot } from "./script_path.ts";
import { hasControlCharacters } from "./dir_name.ts";

// The strict schema's fields; unknown keys are left to `plugins validate`.
const LooseService = z.object(ServiceSchema.shape);

/**
 * Reads the `services` list. Requires `--allow-read`.
 *
 * @param raw The lenient value of `services` (undefined or null when absent).
 * @returns The kept services, the problems, and the notes only `plugins validate` reports.
 */
export function buildServices(
  root: PluginRoot,
  raw: unknown,
): { services: PluginService[]; problems: Problem[]; notes: Problem[] } {
  const services: PluginService[] = [];
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (raw === undefined || raw === null) return { services, problems, notes };
  if (!Array.isArray(raw)) {
    const reason = `must be a list of services, not ${kindOf(raw)}`;
    return { services, problems: [dropped('"services"', reason, ["services"])], notes };
  }
  for (const [index, item] of raw.entries()) {
    const at = ["services", index];
    const name = isRecord(item) && typeof item.name === "string" && item.name !== ""
      ? item.name
      : null;
    const what = name === null ? `service #${index + 1}` : `service ${quote(name)}`;
    const entry = withoutNulls(item);
    if (isRecord(entry) && Array.isArray(entry.env)) {
      const env = entry.env;
      entry.env = env.filter((value, j) => {
        // ty passes such an entry on and keeps the service; tyhooks keeps the service too.
        if (typeof value !== "string" || ENV_ENTRY.test(value)) return true;
        const key = value.includes("=")
          ? " (KEY: letters, digits and _, not starting with a digit)"
          : "";
        const warning = `Skipped env entry ${quote(value)} of ${what}: it is not KEY=VALUE${key}`;
        problems.push({ message: warning, at: [...at, "env", j] });
        return false;
      });
    }
    const parsed = LooseService.safeParse(entry, { reportInput: true });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push(dropped(what, describeIssue(issue), [...at, ...issue.path]));
      continue;
    }
    const service = parsed.data;
    if (hasControlCharacters(service.name)) {
      problems.push(dropped(`service #${index + 1}`, "its name contains control characters", at));
      continue;
    }
    if (services.some((s) => s.name === service.name)) {
      problems.push(dropped(what, "the name is already used by an earlier service", at));
      continue;
    }
    if (service.command.includes("\0")) {
      problems.push(dropped(what, '"command" contains a NUL byte', [...at, "command"]));
      continue;
    }
    const cwd = checkCwd(root, service.cwd ?? "");
    if (!cwd.ok) {
      problems.push(dropped(what, `cwd ${quote(service.cwd ?? "")} ${cwd.reason}`, [...at, "cwd"]));
      continue;
    }
    if (cwd.outside !== null) {
      const message = outsideDir(
        `Service ${quote(service.name)}`,
        "cwd",
        service.cwd ?? "",
        cwd.outside,
      );
      notes.push({ message, at: [...at, "cwd"] });
    }
    services.push({
      name: service.name,
      command: service.command,
      cwd: cwd.path,
      env: service.env ?? [],
      restart: service.restart ?? "on-failure",
    });
  }
  return { services, problems, notes };
}
