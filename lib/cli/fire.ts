/**
 * `tyhooks fire` and `status-change`, and what they share: choosing which hooks run
 * (`--plugin`), showing their output (`--show-output`), and warning about a likely typo in an
 * event name or a status.
 *
 * @module
 */

import {
  type CommandContext,
  type CommandModule,
  durationOption,
  type OptionSpec,
  stringOption,
  UsageError,
} from "./types.ts";
import {
  HOOK_TIMEOUT_OPTION,
  loadIndex,
  readTaskOption,
  runnerOptions,
  TASK_OPTIONS,
} from "./runner.ts";
import { relaunchDetached } from "./detach.ts";
import { hooksDir } from "../paths.ts";
import { Runner } from "../hooks/runner.ts";
import { EMPTY_TASK } from "../wire/task.ts";
import { STATUS_EVENTS, statusEvent, TASK_EVENTS } from "../events.ts";
import { failureReason, type RunResult, succeeded, toRecord } from "../process/run_script.ts";
import { closest, jsonText, quoted } from "../text.ts";

/** Flags of `fire` and `status-change`. */
const EVENT_OPTIONS: Record<string, OptionSpec> = {
  ...TASK_OPTIONS,
  message: { type: "string", value: "M", help: "TASK_MESSAGE for the hooks" },
  plugin: {
    type: "string",
    value: "P",
    multiple: true,
    help: 'run only plugin P\'s hook ("legacy": the legacy hook)',
  },
  "show-output": {
    type: "boolean",
    help: "print each hook's stdout and stderr under a header naming it (for trying a hook)",
  },
  timeout: HOOK_TIMEOUT_OPTION,
  detach: {
    type: "boolean",
    help: "run in the background and return at once (log: <cache>/tyhooks/detached.log)",
  },
  json: { type: "boolean", help: 'print {"event","runs"} as JSON' },
};

export const fire: CommandModule = {
  spec: {
    summary:
      "Run every hook of <event>: the legacy hook <hooks-dir>/<event> and each plugin handling it, concurrently.",
    args: "<event>",
    positionals: [1, 1],
    options: EVENT_OPTIONS,
    details: "Failing hooks never make fire fail: they are logged to stderr, and one info line " +
      "says how many hooks ran and how many failed. Exit 0. Any event " +
      "name may be fired; one close to a known event (task.doen) is warned about.",
  },
  run: (ctx) => fireEvent(ctx, "event", TASK_EVENTS, (event) => event),
};

export const statusChange: CommandModule = {
  spec: {
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
    details: "queued, processing -> task.started; done -> task.done; blocked -> task.failed " +
      'when the message contains "fail" or "error" (any case), else task.blocked; other ' +
      "statuses fire nothing (one close to a known status, such as Done, is warned about).",
  },
  run: (ctx) => fireEvent(ctx, "status", Object.keys(STATUS_EVENTS), statusEvent),
};

/** Fires the event the first word names (null: none), or hands the call to `--detach`. */
async function fireEvent(
  ctx: CommandContext,
  what: "event" | "status",
  known: readonly string[],
  eventOf: (word: string, message: string) => string | null,
): Promise<number> {
  const word = ctx.positionals[0];
  warnIfNear(ctx, what, word, known);
  const task = await readTaskOption(ctx);
  durationOption(ctx, "timeout");
  if (ctx.values.detach) {
    // A --plugin the background run would refuse is this call's usage error (64), not its own.
    if (ctx.values.plugin !== undefined) await eventRunner(ctx);
    await relaunchDetached(ctx, [what === "event" ? "fire" : "status-change"], { task });
    return 0;
  }
  const message = stringOption(ctx.values, "message") ?? "";
  const event = eventOf(word, message);
  const runner = await eventRunner(ctx);
  if (event === null) ctx.log.log("info", `Status ${quoted(word)} fires no event`);
  const runs = event === null ? [] : await runner.fireRuns(event, task ?? EMPTY_TASK, message);
  if (event !== null) ctx.log.log("info", summary(event, runs));
  await printRuns(ctx, event ?? "", runs);
  return 0;
}

/** What a fire did, in one line: `"task.done": 2 hooks ran, 1 failed`. */
function summary(event: string, runs: RunResult[]): string {
  if (runs.length === 0) return `No hook handles ${quoted(event)}`;
  const failed = runs.filter((r) => !succeeded(r)).length;
  const ran = `${runs.length} ${runs.length === 1 ? "hook" : "hooks"} ran`;
  return `${quoted(event)}: ${ran}${failed === 0 ? "" : `, ${failed} failed`}`;
}

// Any name may be fired, but a near miss of a known one (`task.doen`, `Done`) is likely a typo.
function warnIfNear(ctx: CommandContext, what: string, value: string, known: readonly string[]) {
  if (known.includes(value)) return;
  const suggestion = closest(value, known);
  if (suggestion === undefined) return;
  ctx.log.log("warn", `Unknown ${what} ${quoted(value)}: did you mean ${quoted(suggestion)}?`, {
    hint: `the ${what} is used as given`,
  });
}

/**
 * A Runner for an event's hooks: every plugin and the legacy hook, or only those `--plugin`
 * names (`legacy` for the legacy hook), so a hook being written can be tried without firing
 * the user's real notifiers.
 */
async function eventRunner(ctx: CommandContext): Promise<Runner> {
  const timeout = durationOption(ctx, "timeout");
  const only = ctx.values.plugin as string[] | undefined ?? [];
  const index = await loadIndex(ctx);
  const names = index.plugins.map((p) => p.name);
  for (const name of only) {
    if (name === "legacy" || names.includes(name)) continue;
    const suggestion = closest(name, [...names, "legacy"]);
    throw new UsageError(
      `Unknown plugin "${name}" for flag "--plugin"`,
      suggestion
        ? `hint: did you mean "${suggestion}"?`
        : `hint: installed plugins: ${names.map((n) => `"${n}"`).join(", ") || "none"}`,
    );
  }
  const chosen = only.length === 0
    ? index
    : { ...index, plugins: index.plugins.filter((p) => only.includes(p.name)) };
  const timeouts = timeout ? { event: timeout } : {};
  // Every plugin: the legacy hooks too, where the hooks dir can be found (runnerOptions).
  if (only.length === 0) return new Runner(chosen, runnerOptions(ctx, { timeouts }));
  const legacy = only.includes("legacy") ? hooksDir(ctx.globals.hooksDir) : undefined;
  return new Runner(chosen, runnerOptions(ctx, { hooksDir: legacy, timeouts }));
}

/** Prints what `--json` and `--show-output` ask for. */
async function printRuns(ctx: CommandContext, event: string, runs: RunResult[]): Promise<void> {
  const show = ctx.values["show-output"] === true;
  if (ctx.values.json) {
    const records = runs.map((r) =>
      show ? { ...toRecord(r), stdout: r.stdout, stderr: r.stderr } : toRecord(r)
    );
    await ctx.print(jsonText({ event, runs: records }));
    return;
  }
  if (!show) return;
  for (const r of runs) {
    const who = r.plugin === null ? "legacy hook" : `plugin "${r.plugin}"`;
    const how = failureReason(r).replace(/^ok$/, "exit 0");
    await ctx.print(
      `==> ${who}: ${r.script} (${how}) <==\n` + stream("stdout", r.stdout) +
        stream("stderr", r.stderr),
    );
  }
}

function stream(name: string, text: string): string {
  if (text === "") return `--- ${name}: (empty)\n`;
  return `--- ${name}:\n${text}${text.endsWith("\n") ? "" : "\n"}`;
}
