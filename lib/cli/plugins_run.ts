import { type CommandContext, type CommandSpec, TASK_OPTIONS } from "./command.ts";
import { durationOption, makeRunner, readTaskOption } from "./_shared.ts";
import { toRecord } from "../process/record.ts";

export const spec: CommandSpec = {
  name: "plugins run",
  summary:
    "Run a plugin's action, print its output, and exit with its exit code (124 when it timed out).",
  args: "<plugin> <action>",
  positionals: [2, 2],
  options: {
    ...TASK_OPTIONS,
    timeout: { type: "string", value: "DUR", help: "action timeout (default 60s)" },
    json: { type: "boolean", help: "print the run record with its stdout and stderr as JSON" },
  },
  details:
    "The action gets TASK_PLUGIN_NAME and TASK_PLUGIN_DIR, and the TASK_* variables when a task is given.",
};

export async function run(ctx: CommandContext): Promise<number> {
  const [plugin, action] = ctx.positionals;
  const task = await readTaskOption(ctx);
  const actionTimeout = durationOption(ctx, "timeout");
  const runner = await makeRunner(ctx, {
    timeouts: actionTimeout ? { action: actionTimeout } : {},
  });
  const result = await runner.runAction(plugin, action, task);
  if (ctx.values.json) {
    await ctx.print(
      JSON.stringify({ ...toRecord(result), stdout: result.stdout, stderr: result.stderr }) + "\n",
    );
  } else {
    await ctx.print(result.stdout);
    if (result.stderr) Deno.stderr.writeSync(new TextEncoder().encode(result.stderr));
  }
  if (result.error !== null) {
    ctx.log.log("error", result.error, { plugin, action });
    return 1;
  }
  if (result.timed_out) {
    ctx.log.log(
      "error",
      `Action "${action}" of plugin "${plugin}" timed out after ${runner.timeouts.action} ms`,
    );
    return 124;
  }
  return result.exit_code ?? 1;
}
