/**
 * Installing plugins as ty does: `plugins add`, `plugins update` and `plugins remove`.
 *
 * @module
 */

import { type CommandContext, type CommandModule, stringOption, UsageError } from "./types.ts";
import { pluginsDir } from "../paths.ts";
import { installPlugin, type InstallResult, updateInstalls } from "../plugins/install/install.ts";
import { removePlugin } from "../plugins/install/remove.ts";
import { logWarnings } from "../plugins/messages.ts";
import { quoted } from "../text.ts";

export const add: CommandModule = {
  spec: {
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
  },
  async run(ctx: CommandContext): Promise<number> {
    const result = await installPlugin(pluginsDir(ctx.globals.pluginsDir), ctx.positionals[0], {
      name: stringOption(ctx.values, "name"),
      ref: stringOption(ctx.values, "ref"),
      signal: ctx.signal,
      onProgress: progressSink(),
      onWait: waitNote(ctx),
    });
    await ctx.print(installLine(result));
    // Say now, not at the first event, what loading drops from what was just installed.
    logWarnings(ctx.log, result.warnings);
    return 0;
  },
};

export const update: CommandModule = {
  spec: {
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
  },
  async run(ctx: CommandContext): Promise<number> {
    const dir = pluginsDir(ctx.globals.pluginsDir);
    const outcomes = await updateInstalls(dir, ctx.positionals[0], {
      signal: ctx.signal,
      onProgress: progressSink(),
      onWait: waitNote(ctx),
    });
    if (outcomes.length === 0) {
      await ctx.print(`Nothing to update in ${quoted(dir)}\n`);
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
  },
};

export const remove: CommandModule = {
  spec: {
    summary: "Remove a plugin or an install folder, and nothing outside the plugins dir.",
    args: "<name>",
    positionals: [1, 1],
    options: {},
    details: [
      "NAME is a plugin name or a folder name in the plugins dir. A plugin inside a collection loses",
      "only its own folder; the rest of the collection stays. A symlink is unlinked, never followed;",
      "a plugin inside a symlinked collection is refused.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const [name] = ctx.positionals;
    // `tyhooks plugins remove "$NAME"` with NAME unset must not look like "no such plugin".
    if (name.trim() === "") {
      throw new UsageError("plugins remove needs a plugin or folder name, not an empty one");
    }
    const removed = await removePlugin(pluginsDir(ctx.globals.pluginsDir), name, {
      onWait: waitNote(ctx),
      signal: ctx.signal,
    });
    const what = removed.unlinked ? "the symlink " : "";
    let line = `Removed ${quoted(name)}: deleted ${what}${quoted(removed.path)}`;
    if (removed.keptFolder !== null) {
      line += `; the rest of ${quoted(removed.keptFolder)} stays`;
    }
    await ctx.print(line + "\n");
    return 0;
  },
};

/** The line that says this command waits for another one's turn. */
function waitNote(ctx: CommandContext): () => void {
  const dir = quoted(pluginsDir(ctx.globals.pluginsDir));
  return () => ctx.log.log("info", `Waiting for another plugins add, update or remove in ${dir}`);
}

/** `Installed "x" in "/p/x": plugins a, b` */
function installLine(result: InstallResult): string {
  const verb = result.updated ? "Updated" : "Installed";
  const what = result.plugins.length === 1 ? "plugin" : "plugins";
  return `${verb} ${quoted(result.folder)} in ${quoted(result.dir)}: ${what} ${
    result.plugins.join(", ")
  }\n`;
}

/** git's progress meter goes to stderr, only when a person is watching it. */
function progressSink(): ((chunk: Uint8Array) => void) | undefined {
  if (!Deno.stderr.isTerminal()) return undefined;
  return (chunk) => {
    for (let done = 0; done < chunk.length;) done += Deno.stderr.writeSync(chunk.subarray(done));
  };
}
