import { type CommandContext, type CommandSpec, stringOption, TASK_OPTIONS } from "./command.ts";
import { durationOption, makeRunner, readTaskOption, relaunchDetached } from "./_shared.ts";

export const spec: CommandSpec = {
  name: "fire",
  summary:
    "Run every hook of <event>: the legacy hook <hooks-dir>/<event> and each plugin handling it, concurrently.",
  args: "<event>",
  positionals: [1, 1],
  options: {
    ...TASK_OPTIONS,
    message: { type: "string", value: "M", help: "TASK_MESSAGE for the hooks" },
    timeout: { type: "string", value: "DUR", help: "per-hook timeout (default 30s)" },
    detach: {
      type: "boolean",
      help: "run in the background and return at once (log: <cache>/tyhooks/detached.log)",
    },
    json: { type: "boolean", help: "print the run records as JSON" },
  },
  details: "Failing hooks never make fire fail: they are logged to stderr. Exit 0.",
};

export async function run(ctx: CommandContext): Promise<number> {
  const event = ctx.positionals[0];
  const task = await readTaskOption(ctx);
  const eventTimeout = durationOption(ctx, "timeout");
  if (ctx.values.detach) {
    await relaunchDetached(ctx, ["fire"], task);
    return 0;
  }
  const runner = await makeRunner(ctx, { timeouts: eventTimeout ? { event: eventTimeout } : {} });
  const runs = await runner.fire(event, task, stringOption(ctx.values, "message") ?? "");
  if (ctx.values.json) await ctx.print(JSON.stringify({ event, runs }) + "\n");
  return 0;
}
