import { type CommandContext, type CommandSpec, stringOption, TASK_OPTIONS } from "./command.ts";
import { durationOption, makeRunner, readTaskOption, relaunchDetached } from "./_shared.ts";
import { EMPTY_TASK } from "../task.ts";

export const spec: CommandSpec = {
  name: "status-change",
  summary: "Map a task status to its event and fire it (ty's OnStatusChange).",
  args: "<status>",
  positionals: [1, 1],
  options: {
    ...TASK_OPTIONS,
    message: { type: "string", value: "M", help: "status message (TASK_MESSAGE)" },
    timeout: { type: "string", value: "DUR", help: "per-hook timeout (default 30s)" },
    detach: { type: "boolean", help: "run in the background and return at once" },
    json: { type: "boolean", help: 'print {"event","runs"} as JSON' },
  },
  details: [
    "queued, processing -> task.started; done -> task.done; blocked -> task.failed when the",
    'message contains "fail" or "error" (any case), else task.blocked; other statuses fire nothing.',
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const status = ctx.positionals[0];
  const task = await readTaskOption(ctx);
  const eventTimeout = durationOption(ctx, "timeout");
  if (ctx.values.detach) {
    await relaunchDetached(ctx, ["status-change"], task);
    return 0;
  }
  const runner = await makeRunner(ctx, { timeouts: eventTimeout ? { event: eventTimeout } : {} });
  const result = await runner.onStatusChange(
    task ?? EMPTY_TASK,
    status,
    stringOption(ctx.values, "message") ?? "",
  );
  if (result.event === null) ctx.log.log("info", `Status "${status}" fires no event`);
  if (ctx.values.json) {
    await ctx.print(JSON.stringify({ event: result.event ?? "", runs: result.runs }) + "\n");
  }
  return 0;
}
