import { type CommandContext, type CommandSpec, stringOption } from "./command.ts";
import { durationOption, readTaskOption, relaunchDetached } from "./_shared.ts";
import { EVENT_OPTIONS, eventRunner, printRuns, warnIfNear } from "./fire.ts";
import { statusEvent } from "../hooks/runner.ts";
import { EMPTY_TASK } from "../task.ts";

/** The statuses that fire an event; others fire nothing, and a near miss is likely a typo. */
const STATUSES = ["queued", "processing", "done", "blocked"];

export const spec: CommandSpec = {
  name: "status-change",
  summary: "Map a task status to its event and fire it (ty's OnStatusChange).",
  args: "<status>",
  positionals: [1, 1],
  options: {
    ...EVENT_OPTIONS,
    message: {
      type: "string",
      value: "M",
      help: "status message (TASK_MESSAGE; blocked with fail or error in it -> task.failed)",
    },
  },
  details: [
    "queued, processing -> task.started; done -> task.done; blocked -> task.failed when the",
    'message contains "fail" or "error" (any case), else task.blocked; other statuses fire nothing',
    "(one close to a known status, such as Done, is warned about).",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const status = ctx.positionals[0];
  warnIfNear(ctx, "status", status, STATUSES);
  const task = await readTaskOption(ctx);
  durationOption(ctx, "timeout");
  if (ctx.values.detach) {
    await relaunchDetached(ctx, ["status-change"], task);
    return 0;
  }
  const message = stringOption(ctx.values, "message") ?? "";
  const event = statusEvent(status, message);
  const runner = await eventRunner(ctx);
  if (event === null) ctx.log.log("info", `Status "${status}" fires no event`);
  const runs = event === null ? [] : await runner.fireRuns(event, task ?? EMPTY_TASK, message);
  await printRuns(ctx, event ?? "", runs);
  return 0;
}
