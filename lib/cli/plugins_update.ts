import type { CommandContext, CommandSpec } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { updateInstalls } from "../plugins/install.ts";
import { logWarnings } from "../plugins/messages.ts";
import { installLine, progressSink } from "./plugins_add.ts";

export const spec: CommandSpec = {
  name: "plugins update",
  summary: "Fetch an install again from its source (or every install); broken updates roll back.",
  args: "[name]",
  positionals: [0, 1],
  options: {},
  details: [
    "NAME is a plugin name or an install folder; a plugin inside a collection updates the whole",
    "collection. The source is ty's .sources.json record, else the checkout's origin. The new copy",
    "replaces the old one only when it holds a usable plugin; otherwise the old one stays and the",
    "update fails (exit 1).",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const dir = pluginsDir(ctx.globals.pluginsDir);
  const outcomes = await updateInstalls(dir, ctx.positionals[0], {
    signal: ctx.signal,
    onProgress: progressSink(),
  });
  if (outcomes.length === 0) {
    await ctx.print(`Nothing to update in ${JSON.stringify(dir)}\n`);
    return 0;
  }
  let failed = 0;
  for (const outcome of outcomes) {
    if (outcome.ok) {
      await ctx.print(installLine(outcome.result));
      logWarnings(ctx.log, outcome.result.warnings);
    } else {
      failed++;
      ctx.log.log("error", `Not updated: ${outcome.error.message}`, { folder: outcome.folder });
    }
  }
  return failed > 0 ? 1 : 0;
}
