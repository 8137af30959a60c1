import type { CommandContext, CommandSpec } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { validatePlugins } from "../plugins/validate.ts";
import { warningJson } from "../plugins/index_json.ts";

export const spec: CommandSpec = {
  name: "plugins validate",
  summary: "Lint every plugin.yaml strictly; exit 1 on any problem.",
  options: {
    json: { type: "boolean", help: 'print {"ok","problems"} as JSON on stdout' },
  },
  details: [
    "Each problem is printed on stdout as FILE:LINE:COL: message: invalid YAML, a missing name,",
    "a duplicate name, unknown keys (a typo such as hook: for hooks:), wrong types, and every",
    "hook, action or service that loading would drop. Exit 0 when there is none.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const dir = pluginsDir(ctx.globals.pluginsDir);
  const result = await validatePlugins(dir);
  if (ctx.values.json) {
    const doc = { ok: result.ok, problems: result.problems.map(warningJson) };
    await ctx.print(JSON.stringify(doc, null, 2) + "\n");
  } else if (result.ok) {
    const count = `${result.checked} ${result.checked === 1 ? "plugin" : "plugins"}`;
    await ctx.print(`ok: ${count} in ${JSON.stringify(dir)}\n`);
  } else {
    await ctx.print(
      result.problems.map((p) =>
        // A problem of the whole file (too large, not UTF-8) is reported at 1:1.
        `${p.path}:${p.line ?? 1}:${p.column ?? 1}: ${p.message}\n`
      ).join(""),
    );
  }
  return result.ok ? 0 : 1;
}
