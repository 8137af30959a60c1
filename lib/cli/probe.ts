import { type CommandContext, type CommandSpec, stringOption } from "./command.ts";
import { probeHost } from "../hosts/probe.ts";

export const spec: CommandSpec = {
  name: "probe",
  summary: "Print this host's facts as one JSON object, for pick-host on a control host.",
  options: {
    workdir: {
      type: "string",
      value: "DIR",
      help: "report free disk of DIR (default $HOME)",
    },
  },
  details: [
    'Fields: "hostname", "os", "arch", "cpus", "load_avg" [1, 5, 15 min], "mem_total_bytes",',
    '"mem_available_bytes", "disk_free_bytes", "uptime_s", "version". When free disk cannot be',
    "measured (no df, a missing DIR) it is 0 and a warning goes to stderr.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const facts = await probeHost({
    workdir: stringOption(ctx.values, "workdir"),
    log: ctx.log,
    signal: ctx.signal,
  });
  await ctx.print(JSON.stringify(facts) + "\n");
  return 0;
}
