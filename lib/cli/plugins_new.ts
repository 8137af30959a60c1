import type { CommandContext, CommandSpec } from "./command.ts";
import { stringOption } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { scaffoldPlugin } from "../plugins/scaffold.ts";

export const spec: CommandSpec = {
  name: "plugins new",
  summary: "Scaffold a plugin that validates and runs: manifest, schema, script stubs, README.",
  args: "<name>",
  positionals: [1, 1],
  options: {
    hooks: { type: "string", value: "E,..", help: "events to hook (default task.done)" },
    actions: { type: "string", value: "ID,..", help: "action ids" },
    dir: { type: "string", value: "D", help: "create it in D (default: the plugins dir)" },
  },
  details: [
    "Writes <dir>/<name>/plugin.yaml (with a yaml-language-server modeline pointing at the",
    "plugin.schema.json written next to it), an executable stub per hook and action that follows",
    "its protocol, and a README line on how to try it. Nothing existing is overwritten.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const list = (flag: string) => stringOption(ctx.values, flag)?.split(",");
  const parent = stringOption(ctx.values, "dir") ?? pluginsDir(ctx.globals.pluginsDir);
  const made = await scaffoldPlugin(parent, ctx.positionals[0], {
    hooks: list("hooks"),
    actions: list("actions"),
  });
  const files = made.files.map((f) => `  ${f}\n`).join("");
  await ctx.print(`Created ${JSON.stringify(made.dir)}:\n${files}`);
  return 0;
}
