import type { CommandContext, CommandSpec } from "./command.ts";
import { stringOption } from "./command.ts";
import { pluginsDir } from "../dirs.ts";
import { installPlugin, type InstallResult } from "../plugins/install.ts";
import { logWarnings } from "../plugins/messages.ts";

export const spec: CommandSpec = {
  name: "plugins add",
  summary: "Install a plugin or a collection of plugins, as ty does; adding it again updates it.",
  args: "<source>",
  positionals: [1, 1],
  options: {
    name: { type: "string", value: "N", help: "install folder name (default: the repo's name)" },
    ref: { type: "string", value: "REF", help: "branch, tag or commit to check out (recorded)" },
  },
  details: [
    "SOURCE: a git URL (https://, ssh://, git@host:path, file://), owner/repo or",
    "github.com/owner/repo (GitHub), or a local path (./x, /x, ~/x). Repositories are cloned with",
    "--depth 1; a local folder that is not a repository is copied. It goes to",
    "<plugins-dir>/<folder>, the folder named after the repository or folder. A source without a",
    "plugin.yaml at its root is a collection: every plugin in it becomes active. A source with no",
    "usable plugin is not installed. Provenance is kept in ty's <plugins-dir>/.sources.json.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const result = await installPlugin(pluginsDir(ctx.globals.pluginsDir), ctx.positionals[0], {
    name: stringOption(ctx.values, "name"),
    ref: stringOption(ctx.values, "ref"),
    signal: ctx.signal,
    onProgress: progressSink(),
  });
  await ctx.print(installLine(result));
  // Say now, not at the first event, what loading drops from what was just installed.
  logWarnings(ctx.log, result.warnings);
  return 0;
}

/** `Installed "x" in "/p/x": plugins a, b` */
export function installLine(result: InstallResult): string {
  const verb = result.updated ? "Updated" : "Installed";
  const what = result.plugins.length === 1 ? "plugin" : "plugins";
  return `${verb} ${JSON.stringify(result.folder)} in ${JSON.stringify(result.dir)}: ${what} ${
    result.plugins.join(", ")
  }\n`;
}

/** git's progress meter goes to stderr, only when a person is watching it. */
export function progressSink(): ((chunk: Uint8Array) => void) | undefined {
  if (!Deno.stderr.isTerminal()) return undefined;
  return (chunk) => {
    for (let done = 0; done < chunk.length;) done += Deno.stderr.writeSync(chunk.subarray(done));
  };
}
