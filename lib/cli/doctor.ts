/**
 * `tyhooks doctor [--json]`: checks the setup and prints one line per check, with the fix of
 * every warning and failure; exit 1 when a check fails.
 *
 * @module
 */

import type { CommandContext, CommandSpec } from "./types.ts";
import { EXIT } from "./types.ts";
import { hooksDir, pluginsDir } from "../paths.ts";
import { doctor } from "../doctor/doctor.ts";
import type { Check } from "../doctor/check.ts";
import { escapeControl, jsonText } from "../text.ts";

export const spec: CommandSpec = {
  summary: "Check the setup and say how to fix what is wrong; exit 1 when a check fails.",
  options: {
    json: {
      type: "boolean",
      help: 'print {"ok","checks":[{"name","status","detail","fix"}]} as JSON on stdout',
    },
  },
  details: [
    "One line per check: ok, warn or fail, what was checked and found, and for a warning or a",
    "failure the fix (a command to run or an edit to make). Checked: the Deno tyhooks runs on",
    "(against the pinned release), how tyhooks is installed and its grants; the plugins dir and",
    "the legacy hooks dir (yours, writable by nobody else); every problem plugins validate finds,",
    "among them each script that would not run (not executable, no #! line, CRLF line ends); the",
    "index cache; the spool (events waiting, or set aside); a daemon on the socket the agents'",
    "fast path uses ($TYHOOKS_DAEMON, else the default): the socket yours (0600 in a 0700 dir),",
    "the same plugins dir and version; and each coding agent's settings, user-wide and in the",
    "current dir: tyhooks run by an absolute path that exists, consulted events fail-closed.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const checks = await doctor({
    pluginsDir: pluginsDir(ctx.globals.pluginsDir),
    hooksDir: hooksDir(ctx.globals.hooksDir),
  });
  const ok = !checks.some((c) => c.status === "fail");
  if (ctx.values.json) {
    await ctx.print(jsonText({ ok, checks }, 2));
  } else {
    await ctx.print(checks.map(line).join(""));
  }
  const count = (status: Check["status"]) => checks.filter((c) => c.status === status).length;
  ctx.log.log(
    "info",
    `${checks.length} checks: ${count("ok")} ok, ${count("warn")} warned, ${count("fail")} failed`,
  );
  return ok ? EXIT.success.code : EXIT.failure.code;
}

function line(check: Check): string {
  const fix = check.fix === null ? "" : `; fix: ${check.fix}`;
  return escapeControl(`${check.status.padEnd(4)}  ${check.name}: ${check.detail}${fix}`) + "\n";
}
