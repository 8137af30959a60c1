import { type CommandContext, type CommandSpec, TASK_OPTIONS } from "./command.ts";
import { durationOption, makeConsultRunner, taskOrEmpty } from "./_shared.ts";

export const spec: CommandSpec = {
  name: "hosts",
  summary:
    "Ask every task.hosts handler where the task could run, and print their merged candidates.",
  options: {
    ...TASK_OPTIONS,
    sequential: { type: "boolean", help: "ask one handler after another, as ty does" },
    timeout: { type: "string", value: "DUR", help: "per-handler timeout (default 5s)" },
    deadline: {
      type: "string",
      value: "DUR",
      help: "bound on the whole call (default: the handlers' timeouts)",
    },
  },
  details: [
    'Prints {"hosts":[{"name","target","workdir","detail"}]}. Every handler is asked (all at',
    "once); the lists are merged in plugin-name order, a duplicate target keeping the first entry.",
    "An entry's empty target is filled from its name and the other way round; entries with",
    "neither are dropped. A failing handler contributes nothing (logged). Exit 0.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const task = await taskOrEmpty(ctx);
  const timeout = durationOption(ctx, "timeout");
  const { runner, deadline } = await makeConsultRunner(ctx, {
    timeouts: timeout ? { hosts: timeout } : {},
  });
  const list = await runner.listHosts(task, {
    ...deadline,
    sequential: ctx.values.sequential === true,
  });
  await ctx.print(JSON.stringify(list) + "\n");
  return 0;
}
