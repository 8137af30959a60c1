import type { CommandContext, CommandSpec } from "./command.ts";
import { manifestJsonSchema } from "../plugins/json_schema.ts";

export const spec: CommandSpec = {
  name: "plugins schema",
  summary: "Print the JSON Schema of plugin.yaml (generated from the zod schema tyhooks uses).",
  options: {},
  details: 'Point an editor at it, e.g. "# yaml-language-server: $schema=plugin.schema.json".',
};

export async function run(ctx: CommandContext): Promise<number> {
  await ctx.print(JSON.stringify(await manifestJsonSchema(), null, 2) + "\n");
  return 0;
}
