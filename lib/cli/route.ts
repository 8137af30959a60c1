import { type CommandContext, type CommandSpec, TASK_OPTIONS } from "./command.ts";
import { durationOption, makeRunner, taskOrEmpty } from "./_shared.ts";
import type { RouteResult } from "../resolve/route.ts";

export const spec: CommandSpec = {
  name: "route",
  summary:
    "Ask the task.route handlers, one after another in name order, which profile the task runs under; the first non-empty decision wins.",
  options: {
    ...TASK_OPTIONS,
    json: { type: "boolean", help: 'print {"plugin","claude_config_dir","hold","reason"}' },
    timeout: { type: "string", value: "DUR", help: "per-router timeout (default 15s)" },
    deadline: {
      type: "string",
      value: "DUR",
      help: "bound on the whole call (default: the per-router timeout)",
    },
  },
  details: [
    "Prints PLUGIN=name, CLAUDE_CONFIG_DIR=dir, HOLD=1 (when the task must wait) and REASON=text,",
    "one a line; nothing at all when no router decided. Routers that fail or time out are logged",
    "and skipped. Exit 0.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const task = await taskOrEmpty(ctx);
  const timeout = durationOption(ctx, "timeout");
  const deadlineMs = durationOption(ctx, "deadline");
  const runner = await makeRunner(ctx, { timeouts: timeout ? { route: timeout } : {} });
  const decision = await runner.route(task, { deadlineMs });
  if (ctx.values.json) await ctx.print(JSON.stringify(decision) + "\n");
  else if (decision.plugin !== "") await ctx.print(keyValueLines(decision));
  return 0;
}

function keyValueLines(decision: RouteResult): string {
  const lines = [`PLUGIN=${decision.plugin}`, `CLAUDE_CONFIG_DIR=${decision.claude_config_dir}`];
  if (decision.hold) lines.push("HOLD=1");
  lines.push(`REASON=${decision.reason}`);
  return lines.join("\n") + "\n";
}
