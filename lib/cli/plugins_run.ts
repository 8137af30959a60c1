import {
  type CommandContext,
  type CommandSpec,
  durationOption,
  EXIT,
  UsageError,
} from "./types.ts";
import { makeRunner, readTaskOption, TASK_OPTIONS } from "./runner.ts";
import { toRecord } from "../process/run_script.ts";
import type { ActionOptions } from "../hooks/runner.ts";
import { jsonText, quoted } from "../text.ts";
import { writeAll } from "../fs.ts";

export const spec: CommandSpec = {
  summary:
    "Run a plugin's action, print its output, and exit with its exit code (124 when it timed out).",
  args: "<plugin> <action> [-- ARG...]",
  // A third word is ty's task-id form, refused with a hint below.
  positionals: [2, 3],
  passesArgs: true,
  options: {
    ...TASK_OPTIONS,
    timeout: { type: "string", value: "DUR", help: "action timeout (default 60s)" },
    json: { type: "boolean", help: "print the run record with its stdout and stderr as JSON" },
  },
  details: [
    "The action's output is passed through as it comes; its stdin is this command's stdin when",
    "that is not a terminal (and not the task). It gets TASK_PLUGIN_NAME and TASK_PLUGIN_DIR, and",
    "the TASK_* variables when a task is given. The words after -- are its arguments, as they are",
    "(a tyhooks extension: ty runs an action without arguments).",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const [plugin, action, extra] = ctx.positionals;
  if (extra !== undefined) {
    // `ty plugins run P A 42` reads task 42 from ty's database; tyhooks has none.
    const id = /^\d+$/.test(extra) ? extra : "42";
    throw new UsageError(
      `Unexpected argument ${quoted(extra)} for "plugins run": tyhooks has no task ` +
        "database, so a task is given as JSON",
      `hint: tyhooks plugins run ${plugin} ${action} --task-json '{"id":${id},...}'`,
    );
  }
  const task = await readTaskOption(ctx);
  const actionTimeout = durationOption(ctx, "timeout");
  const runner = await makeRunner(ctx, {
    timeouts: actionTimeout ? { action: actionTimeout } : {},
  });
  const live: ActionOptions = { task, args: ctx.passed };
  if (!ctx.values.json) {
    // Shown as it comes, byte for byte (a progress bar, a long sync), not when the action ends.
    // Written asynchronously: a reader that stalls (a paused terminal, `| sleep 60`) holds the
    // action back on its pipe, never the timers and signal handlers that end it. A reader that
    // goes away (`| head`) is written to no more, and the action runs on.
    live.onOutput = (stream, chunk) =>
      writeAll(stream === "stdout" ? Deno.stdout : Deno.stderr, chunk);
  }
  if (ctx.values.task !== "-" && !Deno.stdin.isTerminal()) live.stdin = Deno.stdin.readable;
  const result = await runner.runAction(plugin, action, live);
  if (ctx.values.json) {
    await ctx.print(
      jsonText({ ...toRecord(result), stdout: result.stdout, stderr: result.stderr }),
    );
  }
  for (const stream of ["stdout", "stderr"] as const) {
    // Streamed output was shown whole; only the JSON record's copy can be cut.
    if (ctx.values.json && result[`${stream}_truncated`]) {
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
    return EXIT.timedOut.code;
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
