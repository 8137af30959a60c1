import type { CommandContext, CommandSpec } from "./command.ts";
import { pluginsDir } from "../dirs.ts";

export const spec: CommandSpec = {
  name: "plugins dir",
  summary:
    "Print the plugins dir: --plugins-dir, else $TY_PLUGINS_DIR, else <config>/task/plugins.",
  options: {},
};

export async function run(ctx: CommandContext): Promise<number> {
  await ctx.print(pluginsDir(ctx.globals.pluginsDir) + "\n");
  return 0;
}
