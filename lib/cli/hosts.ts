import { type CommandContext, type CommandSpec, consultOptions, TASK_OPTIONS } from "./command.ts";
import { makeConsultRunner, taskOrEmpty } from "./_shared.ts";

export const spec: CommandSpec = {
  name: "hosts",
  summary:
    "Ask every task.hosts handler where the task could run, and print their merged candidates.",
  options: {
    ...TASK_OPTIONS,
    ...consultOptions("handler", "5s"),
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
  const { runner, consult } = await makeConsultRunner(ctx, "hosts");
  const list = await runner.listHosts(task, consult);
  await ctx.print(JSON.stringify(list) + "\n");
  return 0;
}
