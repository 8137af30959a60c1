import type { CommandContext, CommandSpec } from "./command.ts";
import { loadIndex } from "./_shared.ts";
import { listServices } from "../services/service_set.ts";
import type { ServiceEntry } from "../wire/services.ts";

export const spec: CommandSpec = {
  name: "services list",
  summary:
    'List the services "services run" would supervise, from the manifests, starting nothing.',
  options: {
    json: {
      type: "boolean",
      help: 'print {"services":[{"plugin","name","command","cwd","restart"}]}',
    },
  },
};

export async function run(ctx: CommandContext): Promise<number> {
  const index = await loadIndex(ctx);
  const services = listServices(index);
  if (ctx.values.json) {
    await ctx.print(JSON.stringify({ services }) + "\n");
  } else if (services.length === 0) {
    ctx.log.log("info", "No services", { plugins_dir: index.dir });
  } else {
    await ctx.print(table(services));
  }
  return 0;
}

const COLUMNS = ["PLUGIN", "SERVICE", "RESTART", "CWD", "COMMAND"];

function table(services: ServiceEntry[]): string {
  const rows = [
    COLUMNS,
    ...services.map((s) => [s.plugin, s.name, s.restart, s.cwd, s.command].map(oneLine)),
  ];
  const widths = COLUMNS.map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  return rows
    .map((row) => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])))
    .map((cells) => cells.join("  ") + "\n")
    .join("");
}

// A multi-line command (a YAML block scalar) must not break the table: control characters are
// shown escaped.
function oneLine(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}
