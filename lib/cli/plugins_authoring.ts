/**
 * What a plugin author asks for: a new plugin (`plugins new`), the manifest's JSON Schema
 * (`plugins schema`), and where plugins live (`plugins dir`).
 *
 * @module
 */

import { type CommandContext, type CommandModule, stringOption } from "./types.ts";
import { pluginsDir } from "../paths.ts";
import { isKnownEvent } from "../events.ts";
import { scaffoldPlugin } from "../plugins/scaffold.ts";
import { quoted } from "../text.ts";

export const create: CommandModule = {
  spec: {
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
  },
  async run(ctx: CommandContext): Promise<number> {
    const list = (flag: string) => stringOption(ctx.values, flag)?.split(",");
    const parent = stringOption(ctx.values, "dir") ?? pluginsDir(ctx.globals.pluginsDir);
    const made = await scaffoldPlugin(parent, ctx.positionals[0], {
      hooks: list("hooks"),
      actions: list("actions"),
    });
    const files = made.files.map((f) => `  ${f}\n`).join("");
    await ctx.print(`Created ${quoted(made.dir)}:\n${files}`);
    for (const event of made.hooks.filter((e) => !isKnownEvent(e))) {
      ctx.log.log("warn", `Event ${quoted(event)} is none that ty or tyhooks sends`, {
        hint: `its hook runs only when something fires it: tyhooks fire ${event}`,
      });
    }
    return 0;
  },
};

export const schema: CommandModule = {
  spec: {
    summary:
      "Print the JSON Schema (draft-07) of plugin.yaml, generated from the zod schema tyhooks uses.",
    options: {},
    details: "Save it next to a manifest and point YAML editors at it with a first line\n" +
      '"# yaml-language-server: $schema=./plugin.schema.json" (as "plugins new" does).',
  },
  async run(ctx: CommandContext): Promise<number> {
    // zod is imported only here, not by every start.
    const { manifestJsonSchema } = await import("../plugins/manifest_schema.ts");
    await ctx.print(JSON.stringify(await manifestJsonSchema(), null, 2) + "\n");
    return 0;
  },
};

export const dir: CommandModule = {
  spec: {
    summary:
      "Print the plugins dir: --plugins-dir, else $TY_PLUGINS_DIR, else <config>/task/plugins.",
    options: {},
  },
  async run(ctx: CommandContext): Promise<number> {
    await ctx.print(pluginsDir(ctx.globals.pluginsDir) + "\n");
    return 0;
  },
};
