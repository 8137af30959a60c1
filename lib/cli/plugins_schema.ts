import type { CommandContext, CommandSpec } from "./command.ts";
import { manifestJsonSchema } from "../plugins/json_schema.ts";

export const spec: CommandSpec = {
  name: "plugins schema",
  summary:
    "Print the JSON Schema (draft-07) of plugin.yaml, generated from the zod schema tyhooks uses.",
  options: {},
  details: "Save it next to a manifest and point YAML editors at it with a first line\n" +
    '"# yaml-language-server: $schema=./plugin.schema.json" (as "plugins new" does).',
};

export async function run(ctx: CommandContext): Promise<number> {
  await ctx.print(JSON.stringify(await manifestJsonSchema(), null, 2) + "\n");
  return 0;
}
