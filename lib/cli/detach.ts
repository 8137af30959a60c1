/**
 * `--detach` (`fire`, `status-change`, `tool post`): the same command again in the background,
 * its command line handed over on stdin (lib/process/detach.ts), its output in a log file.
 *
 * @module
 */

import { cacheDir } from "../dirs.ts";
import { join } from "../path.ts";
import { type CommandContext, DETACHED_CHILD_FLAG } from "./types.ts";
import type { Task } from "../wire/task.ts";
import { handOffDetached, selfCommand } from "../process/detach.ts";

/** Where detached runs write their output. */
export function detachedLogPath(): string {
  return join(cacheDir(), "tyhooks", "detached.log");
}

// Flags the background run must not see again: it must not detach once more, and a task read
// from a file or stdin travels as the task itself.
const NOT_RELAUNCHED = new Set(["detach", "task", "task-json", "help"]);

/**
 * Runs the same command again in the background: its whole command line (flags as
 * `--name=value`, so a value starting with `-` stays a value; the task inline) travels on the
 * background run's stdin, never on its argv. Returns once the background run has read it.
 * `words` are the command's (`["tool", "post"]`); `replaced` flags are sent instead of the
 * caller's (undefined drops one).
 *
 * @throws {RunError} When the background run cannot start or does not take its work.
 */
export async function relaunchDetached(
  ctx: CommandContext,
  words: string[],
  { task, replaced = {} }: { task?: Task; replaced?: CommandContext["values"] } = {},
): Promise<void> {
  const args = [...words];
  const values = { ...ctx.values, ...replaced };
  for (const [name, value] of Object.entries(values)) {
    if (NOT_RELAUNCHED.has(name) || value === undefined || value === false) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      args.push(one === true ? `--${name}` : `--${name}=${one}`);
    }
  }
  if (task !== undefined) args.push(`--task-json=${JSON.stringify(task)}`);
  // The log file outlives the call: timestamped JSON lines unless the caller chose a format.
  if (values["log-format"] === undefined) args.push("--log-format=json");
  // "--" last: positionals (an event name) may start with "-" too.
  args.push("--", ...ctx.positionals);
  const log = detachedLogPath();
  const run = await handOffDetached([...selfCommand(), DETACHED_CHILD_FLAG], args, log, {
    signal: ctx.signal,
  });
  if (run.logProblem !== null) {
    ctx.log.log("warn", `The background run writes no log: ${run.logProblem}`, {
      hint: `remove it or fix its owner and mode (tyhooks keeps "${log}" 0600 in a 0700 dir)`,
    });
  }
  ctx.log.log("info", "Detached", { pid: run.pid, log: run.logProblem === null ? log : null });
}
