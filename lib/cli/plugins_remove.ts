import type { CommandContext, CommandSpec } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { removePlugin } from "../plugins/remove.ts";

export const spec: CommandSpec = {
  name: "plugins remove",
  summary: "Delete the named plugin's own folder (also inside a collection), nothing else.",
  args: "<name>",
  positionals: [1, 1],
  options: {},
};

export async function run(ctx: CommandContext): Promise<number> {
  const [name] = ctx.positionals;
  const removed = await removePlugin(pluginsDir(ctx.globals.pluginsDir), name);
  await ctx.print(`Removed ${JSON.stringify(name)} from ${JSON.stringify(removed)}\n`);
  return 0;
}
