import { type CommandContext, type CommandSpec, consultOptions, TASK_OPTIONS } from "./command.ts";
import { makeConsultRunner, taskOrEmpty } from "./_shared.ts";
import { PLACEMENT_EVENT } from "../consult/placement.ts";

/** Exit code when a remote target was required and nobody named one. */
const EXIT_NO_TARGET = 3;

export const spec: CommandSpec = {
  name: "place",
  summary:
    "Ask the task.placement handlers (all at once, decided in name order as ty decides) on which host the task runs; the first named target wins.",
  options: {
    ...TASK_OPTIONS,
    "remote-required": {
      type: "boolean",
      help: "the task must run remotely: tell the handlers, and exit 3 when none names a target",
    },
    ...consultOptions("handler", "5s"),
  },
  details: [
    'Prints {"target","workdir","reason","handler"}; an empty target means "run locally".',
    "Exit 0 with empty stdout is a deliberate local answer naming its handler, returned only when",
    "no handler names a target. Handlers that fail, time out or answer badly are logged at error",
    "level and count as local.",
    "Exit 0; 3 with --remote-required when no handler named a target.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const task = await taskOrEmpty(ctx);
  const remoteRequired = ctx.values["remote-required"] === true;
  const { runner, consult } = await makeConsultRunner(ctx, "placement");
  const placement = await runner.resolvePlacement(
    { ...task, remote_required: remoteRequired },
    consult,
  );
  await ctx.print(JSON.stringify(placement) + "\n");
  if (remoteRequired && placement.target === "") {
    ctx.log.log("error", "No placement handler named a target, and --remote-required was given", {
      handlers: runner.handlers(PLACEMENT_EVENT).length,
    });
    return EXIT_NO_TARGET;
  }
  return 0;
}
