import type { CommandContext, CommandSpec } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { loadPlugins } from "../plugins/load.ts";
import { pluginListJson } from "../plugins/index_json.ts";
import type { Plugin } from "../plugins/types.ts";
import { logWarnings } from "../plugins/log_warnings.ts";

export const spec: CommandSpec = {
  name: "plugins list",
  summary: "List the plugins, what each handles, and the warnings of loading them.",
  options: {
    json: { type: "boolean", help: "print the listing as JSON (warnings included) on stdout" },
  },
  details: "Warnings (skipped plugins, dropped entries) go to stderr, or into the JSON.",
};

export async function run(ctx: CommandContext): Promise<number> {
  const index = await loadPlugins(pluginsDir(ctx.globals.pluginsDir));
  if (ctx.values.json) {
    await ctx.print(JSON.stringify(pluginListJson(index), null, 2) + "\n");
    return 0;
  }
  await ctx.print(
    index.plugins.length === 0
      ? `No plugins in ${JSON.stringify(index.dir)}\n`
      : table(index.plugins),
  );
  logWarnings(ctx.log, index.warnings);
  return 0;
}

function table(plugins: Plugin[]): string {
  const rows = [
    ["NAME", "VERSION", "HANDLES"],
    ...plugins.map((p) => [p.name, p.version || "-", handles(p)]),
  ];
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => `${r[0].padEnd(widths[0])}  ${r[1].padEnd(widths[1])}  ${r[2]}`.trimEnd())
    .join("\n") + "\n";
}

/** `hooks task.done, task.route; actions sync; services index; workflows ...; routines ...` */
function handles(p: Plugin): string {
  const parts: [string, string[]][] = [
    ["hooks", Object.keys(p.hooks)],
    ["actions", p.actions.map((a) => a.id)],
    ["services", p.services.map((s) => s.name)],
    ["workflows", p.workflows],
    ["routines", p.routines],
  ];
  return parts.filter(([, names]) => names.length > 0)
    .map(([kind, names]) => `${kind} ${names.join(", ")}`)
    .join("; ");
}
