/**
 * `--detach` (`fire`, `status-change`, `tool post`): the same command again in the background,
 * its work kept in the spool until it has run, its output in a log file.
 *
 * @module
 */

import { cacheDir, hooksDir, join, pluginsDir } from "../paths.ts";
import { type CommandContext, DETACHED_CHILD_FLAG } from "./types.ts";
import type { Task } from "../wire/task.ts";
import { createLogger, type Logger } from "../log.ts";

/** Where detached runs write their output. */
export function detachedLogPath(): string {
  return join(cacheDir(), "tyhooks", "detached.log");
}

/**
 * JSON lines to the detached log, where the background runs of notified work log: for what goes
 * wrong before the work is handed on, when stderr is not the user's (an agent's model reads it).
 * A line that cannot be written is dropped.
 */
export async function detachedLogger(): Promise<Logger> {
  const { appendDetachedLog } = await import("../process/detach.ts");
  const path = detachedLogPath();
  return createLogger({ format: "json", write: (line) => void appendDetachedLog(path, line) });
}

// Flags the spooled command must not carry: it must not detach once more, a task read from a
// file or stdin travels as the task itself, and whoever runs it brings its own log settings.
const NOT_RELAUNCHED = new Set(["detach", "task", "task-json", "help", "log-format", "log-level"]);

/**
 * Runs the same command again in the background: its whole line (flags as `--name=value`, so a
 * value starting with `-` stays one; the task inline; the dirs resolved) goes to the spool for a
 * background `tyhooks spool run ENTRY`, so if that run dies the next one runs the work. Returns
 * once the run took it, or with `wait: false` (an agent waits on this) once it started. On a
 * `RunError` the work is removed: the caller was told it failed. `replaced` flags (undefined
 * drops one) are sent instead of the caller's.
 */
export async function relaunchDetached(
  ctx: CommandContext,
  words: string[],
  { task, replaced = {}, wait = true }: {
    task?: Task;
    replaced?: CommandContext["values"];
    wait?: boolean;
  } = {},
): Promise<void> {
  const args = [...words];
  const values = { ...ctx.values, ...spooledDirs(ctx), ...replaced };
  for (const [name, value] of Object.entries(values)) {
    if (NOT_RELAUNCHED.has(name) || value === undefined || value === false) continue;
    for (const one of Array.isArray(value) ? value : [value]) {
      args.push(one === true ? `--${name}` : `--${name}=${one}`);
    }
  }
  if (task !== undefined) args.push(`--task-json=${JSON.stringify(task)}`);
  // "--" last: positionals (an event name) may start with "-" too.
  args.push("--", ...ctx.positionals);
  const { Spool } = await import("../spool/spool.ts");
  const spool = Spool.open(undefined, { log: ctx.log });
  const entry = await spool.add({ what: [...words, ...ctx.positionals].join(" "), args }, {
    claim: false,
  });
  // The log file outlives the call: timestamped JSON lines unless the caller chose a format.
  const logFlags = [`--log-format=${ctx.values["log-format"] ?? "json"}`];
  if (typeof ctx.values["log-level"] === "string") {
    logFlags.push(`--log-level=${ctx.values["log-level"]}`);
  }
  const { handOffDetached, selfCommand, spawnDetached } = await import("../process/detach.ts");
  const log = detachedLogPath();
  const spoolRun = ["spool", "run", ...logFlags, "--", entry.name];
  let run;
  try {
    run = wait
      ? await handOffDetached([...selfCommand(), DETACHED_CHILD_FLAG], spoolRun, log, {
        signal: ctx.signal,
      })
      // The entry's name is all it takes, and tells nothing of the work: on the argv.
      : spawnDetached([...selfCommand(), ...spoolRun], log);
  } catch (error) {
    await spool.discard(entry);
    throw error;
  } finally {
    await spool.close();
  }
  if (run.logProblem !== null) {
    ctx.log.log("warn", `The background run writes no log: ${run.logProblem}`, {
      hint: `remove it or fix its owner and mode (tyhooks keeps "${log}" 0600 in a 0700 dir)`,
    });
  }
  ctx.log.log("info", "Detached", {
    pid: run.pid,
    log: run.logProblem === null ? log : null,
    spooled: entry.name,
  });
}

// The dirs as this call resolves them: a later `spool run` may start elsewhere, without the
// caller's environment.
function spooledDirs(ctx: CommandContext): CommandContext["values"] {
  const dirs: CommandContext["values"] = { "plugins-dir": pluginsDir(ctx.globals.pluginsDir) };
  try {
    dirs["hooks-dir"] = hooksDir(ctx.globals.hooksDir);
  } catch {
    // No hooks dir to be found ($HOME unset): the run finds none either.
  }
  return dirs;
}
