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
    await ctx.write(result.raw?.stdout ?? new TextEncoder().encode(result.stdout));
    const stderr = result.raw?.stderr ?? new TextEncoder().encode(result.stderr);
    for (let done = 0; done < stderr.length;) done += Deno.stderr.writeSync(stderr.subarray(done));
  }
  for (const stream of ["stdout", "stderr"] as const) {
    if (result[`${stream}_truncated`]) {
      ctx.log.log("warn", `Action ${stream} truncated: kept the first bytes, dropped the rest`, {
        kept_bytes: result.raw?.[stream].length ?? result[stream].length,
        total_bytes: result[`${stream}_bytes`],
      });
    }
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
  if (result.signal !== null) {
    ctx.log.log("error", `Action "${action}" of plugin "${plugin}" was killed by ${result.signal}`);
    return 128 + (SIGNAL_NUMBERS[result.signal] ?? 0);
  }
  return result.exit_code ?? 1;
}

// Exit 128 + n for a death by signal n, as shells report it.
const SIGNAL_NUMBERS: Record<string, number> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
};
