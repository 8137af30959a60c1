import type { CommandContext, CommandSpec } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { removePlugin } from "../plugins/installed.ts";

export const spec: CommandSpec = {
  name: "plugins remove",
  summary: "Remove a plugin or an install folder, and nothing outside the plugins dir.",
  args: "<name>",
  positionals: [1, 1],
  options: {},
  details: [
    "NAME is a plugin name or a folder name in the plugins dir. A plugin inside a collection loses",
    "only its own folder; the rest of the collection stays. A symlink is unlinked, never followed;",
    "a plugin inside a symlinked collection is refused.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const [name] = ctx.positionals;
  const removed = await removePlugin(pluginsDir(ctx.globals.pluginsDir), name);
  const what = removed.unlinked ? "the symlink " : "";
  let line = `Removed ${JSON.stringify(name)}: deleted ${what}${JSON.stringify(removed.path)}`;
  if (removed.keptFolder !== null) {
    line += `; the rest of ${JSON.stringify(removed.keptFolder)} stays`;
  }
  await ctx.print(line + "\n");
  return 0;
}
