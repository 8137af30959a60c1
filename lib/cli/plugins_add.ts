import type { CommandContext, CommandSpec } from "./command.ts";
import { stringOption } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { installPlugin } from "../plugins/install.ts";
import { loadPlugins } from "../plugins/load.ts";
import { isInside } from "../plugins/script_path.ts";
import { logWarnings } from "../plugins/log_warnings.ts";

export const spec: CommandSpec = {
  name: "plugins add",
  summary: "Install a plugin from a git URL or a local folder; adding it again updates it.",
  args: "<git-url|path>",
  positionals: [1, 1],
  options: {
    name: { type: "string", value: "N", help: "folder name (default: the manifest's name)" },
  },
  details: [
    "A local folder is copied (without .git, keeping executable bits); anything else is cloned",
    "with git. The plugin goes to <plugins-dir>/<name>. Adding the same plugin again updates it",
    "(git pull --ff-only, or a fresh copy); a folder holding anything else is never overwritten.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const dir = pluginsDir(ctx.globals.pluginsDir);
  const result = await installPlugin(dir, ctx.positionals[0], {
    name: stringOption(ctx.values, "name"),
    signal: ctx.signal,
  });
  const verb = result.updated ? "Updated" : "Installed";
  await ctx.print(`${verb} ${JSON.stringify(result.name)} in ${JSON.stringify(result.dir)}\n`);
  // Say now, not at the first event, what loading will drop from the new plugin.
  const index = await loadPlugins(dir);
  logWarnings(ctx.log, index.warnings.filter((w) => isInside(result.dir, w.path)));
  return 0;
}
