/**
 * What a command runs plugins with, from its flags (the task, the index through its cache, a
 * Runner, a consulted call's bounds), and the consulted commands that are little more than that:
 * `route`, `place`, `hosts`. One module, not two: these are the warm calls, and each module costs
 * every call its load.
 *
 * @module
 */

import { cacheDir, hooksDir, join, pluginsDir, resolve } from "../paths.ts";
import {
  type CommandContext,
  type CommandModule,
  durationOption,
  EXIT,
  type OptionSpec,
  stringOption,
  UsageError,
} from "./types.ts";
import type { Task } from "../wire/task.ts";
import type { PluginIndex } from "../plugins/types.ts";
import { loadPluginsCached } from "../plugins/cache.ts";
import { Runner, type RunnerOptions } from "../hooks/runner.ts";
import { INPUT_CAPS, readBounded, readBoundedBytes } from "../fs.ts";
import { mayHoldMoreContainers } from "../wire/json.ts";
import { clearableTimeout, createLimit } from "../async.ts";
import { DEFAULT_TIMEOUTS, TASK_PLACEMENT, TASK_ROUTE } from "../events.ts";
import type { RouteResult } from "../consult/route.ts";
import type { Logger } from "../log.ts";
import { escapeControl, jsonText, quoted } from "../text.ts";

/** Task options shared by the commands that act on a task. */
export const TASK_OPTIONS: Record<string, OptionSpec> = {
  task: { type: "string", value: "FILE", help: "task JSON from FILE (- = stdin)" },
  "task-json": { type: "string", value: "JSON", help: "task JSON given inline" },
};

/** `--timeout` of the commands that fire hooks (`fire`, `status-change`, `tool post`). */
export const HOOK_TIMEOUT_OPTION: OptionSpec = {
  type: "string",
  value: "DUR",
  help: "per-hook timeout, over each hook's own (default: its own, else 30s)",
};

/**
 * The most JSON objects and arrays a tool call's input may hold. Parsing 500,000 took 0.3-0.4 s on
 * a 2-core machine, 20 million (60 MB) 50 s: V8 spends it collecting garbage, where no timer can
 * end it, so an input past this is refused before it is parsed. A real one holds far fewer.
 */
export const MAX_CALL_CONTAINERS = 500_000;

/**
 * A tool call's input from `path` (`-` = stdin), bounded in size (a Write carries a whole file),
 * in time (`--deadline`, else `--timeout`: an input that never ends must not hold the call until
 * the agent times the hook out, which lets the call through) and in what parsing it would cost.
 */
export async function readCallInput(
  ctx: CommandContext,
  { path = "-", what, read }: { path?: string; what: string; read?: Promise<Uint8Array> },
): Promise<Uint8Array> {
  const boundMs = durationOption(ctx, "deadline") ?? durationOption(ctx, "timeout") ??
    DEFAULT_TIMEOUTS.tool;
  const timer = clearableTimeout(boundMs);
  let bytes: Uint8Array;
  try {
    const signal = AbortSignal.any([ctx.signal, timer.signal]);
    bytes = await (read ?? readBoundedBytes(path, { signal, maxBytes: INPUT_CAPS.toolCall }));
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const why = timer.signal.aborted
      ? `it did not end within ${boundMs} ms`
      : (error as Error).message;
    throw new UsageError(`Cannot read ${what}: ${why}`);
  } finally {
    timer.clear();
  }
  if (mayHoldMoreContainers(bytes, MAX_CALL_CONTAINERS)) {
    throw new UsageError(
      `Cannot read ${what}: more than ${MAX_CALL_CONTAINERS} JSON objects and arrays ("{" and "[") in ${bytes.length} bytes, too many to read within a deadline`,
    );
  }
  return bytes;
}

/** Reads `--task FILE|-` or `--task-json`; undefined when neither is given. */
export async function readTaskOption(ctx: CommandContext): Promise<Task | undefined> {
  const file = stringOption(ctx.values, "task");
  const inline = stringOption(ctx.values, "task-json");
  if (file !== undefined && inline !== undefined) {
    throw new UsageError('Flags "--task" and "--task-json" cannot be used together');
  }
  if (inline !== undefined) return await parseTask(inline, "--task-json");
  if (file === undefined) return undefined;
  let text: string;
  try {
    text = await readBounded(file, { signal: ctx.signal });
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    throw new UsageError(`Cannot read --task "${file}": ${(error as Error).message}`);
  }
  return await parseTask(text, file === "-" ? "--task - (stdin)" : `--task "${file}"`);
}

// The task reader loads when a task is given: a tool call has none.
async function parseTask(text: string, source: string): Promise<Task> {
  return (await import("../wire/task.ts")).parseTask(text, source);
}

/** Reads the task, or the empty task. */
export async function taskOrEmpty(ctx: CommandContext): Promise<Task> {
  return (await readTaskOption(ctx)) ?? (await import("../wire/task.ts")).EMPTY_TASK;
}

/** Loads the plugin index through its cache (off with `TYHOOKS_NO_CACHE=1`), logging warnings. */
export async function loadIndex(ctx: CommandContext): Promise<PluginIndex> {
  const index = await loadIndexQuietly(ctx);
  await logLoadWarnings(ctx, index);
  return index;
}

// Their wording is loaded only when there are some: a warm call usually has none.
async function logLoadWarnings(ctx: CommandContext, index: PluginIndex): Promise<void> {
  if (index.warnings.length === 0) return;
  const { logWarnings } = await import("../plugins/messages.ts");
  logWarnings(ctx.log, index.warnings);
}

/** {@linkcode loadIndex} without logging the warnings, for a command that shows them itself. */
export async function loadIndexQuietly(
  ctx: CommandContext,
  { signal = ctx.signal, deadline }: { signal?: AbortSignal; deadline?: number } = {},
): Promise<PluginIndex> {
  const dir = pluginsDir(ctx.globals.pluginsDir);
  const cache = Deno.env.get("TYHOOKS_NO_CACHE") === "1" ? undefined : indexCacheDir();
  if (cache === undefined) {
    const { loadPlugins } = await import("../plugins/load.ts");
    return await loadPlugins(dir, { signal, deadline });
  }
  const loaded = await loadPluginsCached(dir, { cacheDir: cache, signal, deadline });
  ctx.log.log("debug", loaded.hit ? "Plugin index from cache" : "Plugin index loaded", {
    dir,
    cache_unused: loaded.reason,
  });
  return loaded.index;
}

// The cache is only an optimisation: with no cache dir to be had (no $HOME, as for some system
// services) tyhooks loads the plugins every time rather than fail.
function indexCacheDir(): string | undefined {
  try {
    return join(cacheDir(), "tyhooks");
  } catch {
    return undefined;
  }
}

/** A Runner over the plugin index with the command's logger, abort signal and timeouts. */
export async function makeRunner(
  ctx: CommandContext,
  options: RunnerOptions = {},
): Promise<Runner> {
  return new Runner(await loadIndex(ctx), runnerOptions(ctx, options));
}

/**
 * Scripts a command runs at once. `fire` starts every hook together; past a few dozen, each one's
 * three pipes run a default `ulimit -n` of 256 out, and the rest fail to start.
 */
const MAX_PROCS = 32;

/** The Runner options every command uses: logger, abort signal, hooks dir, process bound. */
export function runnerOptions(ctx: CommandContext, options: RunnerOptions): RunnerOptions {
  return {
    hooksDir: legacyHooksDir(ctx),
    log: ctx.log,
    signal: ctx.signal,
    limit: createLimit(MAX_PROCS),
    ...options,
  };
}

// The legacy hooks dir, or undefined (with a warning) when it cannot be found: with $HOME unset
// and no --hooks-dir, a call given --plugins-dir still runs its plugins, and a guard still guards.
function legacyHooksDir(ctx: CommandContext): string | undefined {
  try {
    return hooksDir(ctx.globals.hooksDir);
  } catch (error) {
    ctx.log.log("warn", `No legacy hooks dir: ${(error as Error).message}`, {
      hint: "--hooks-dir DIR",
    });
    return undefined;
  }
}

/** The flags every consulted command takes, worded for its handlers ("router", "hook"). */
export function consultOptions(
  handler: string,
  defaultTimeout: string,
  sequentialHelp = `ask one ${handler} after another, as ty does`,
): Record<string, OptionSpec> {
  return {
    sequential: { type: "boolean", help: sequentialHelp },
    timeout: {
      type: "string",
      value: "DUR",
      help: `per-${handler} timeout (default ${defaultTimeout})`,
    },
    deadline: {
      type: "string",
      value: "DUR",
      help: `bound on the whole call (default: the ${handler}s' timeouts)`,
    },
  };
}

/** A consulted call ready to ask: the Runner, and the consult loop's options from the flags. */
export interface ConsultedCall {
  runner: Runner;
  /** `--sequential`, and `--deadline` with when it started (before the plugins were loaded). */
  consult: { deadlineMs?: number; startedAt?: number; sequential: boolean };
}

/**
 * {@linkcode makeRunner} for a consulted call: the load counts against `--deadline` (SPEC, "Trust
 * boundaries"); one still running then is ended, with a warning, so a guard fails closed.
 */
export async function consultedCall(
  ctx: CommandContext,
  handlers: "route" | "placement" | "hosts" | "tool",
  /** When the call started, if before this (its input read from stdin counts too). */
  started: number = performance.now(),
): Promise<ConsultedCall> {
  const timeout = durationOption(ctx, "timeout");
  const options: RunnerOptions = { timeouts: timeout ? { [handlers]: timeout } : {} };
  const sequential = ctx.values.sequential === true;
  const deadlineMs = durationOption(ctx, "deadline");
  if (deadlineMs === undefined) {
    return { runner: await makeRunner(ctx, options), consult: { sequential } };
  }
  const timer = clearableTimeout(Math.max(0, started + deadlineMs - performance.now()));
  let index: PluginIndex;
  try {
    index = await loadIndexQuietly(ctx, {
      signal: AbortSignal.any([ctx.signal, timer.signal]),
      deadline: started + deadlineMs,
    });
  } catch (error) {
    if (ctx.signal.aborted || (error as Error)?.name !== "TimeoutError") throw error;
    const dir = pluginsDir(ctx.globals.pluginsDir);
    const message = `Plugins not loaded within the ${deadlineMs} ms deadline`;
    index = {
      dir,
      plugins: [],
      warnings: [{ plugin: null, path: dir, line: null, column: null, message }],
    };
  } finally {
    timer.clear();
  }
  await logLoadWarnings(ctx, index);
  const runner = new Runner(index, runnerOptions(ctx, options));
  return { runner, consult: { deadlineMs, startedAt: started, sequential } };
}

/** `--on-failure`: `block` (the default: fail closed) or `allow`. */
export function failurePolicy(ctx: CommandContext): "block" | "allow" {
  const value = stringOption(ctx.values, "on-failure") ?? "block";
  if (value !== "block" && value !== "allow") {
    throw new UsageError(
      `Invalid value "${value}" for flag "--on-failure": expected block or allow`,
    );
  }
  return value;
}

/** The explicit hook scripts of a repeatable flag, made absolute (they run from anywhere). */
export function hookPaths(ctx: CommandContext, flag: string): string[] {
  const value = ctx.values[flag];
  const paths = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  return paths.map((path) => resolve(path));
}

export const route: CommandModule = {
  spec: {
    summary:
      "Ask the task.route handlers (all at once, decided in name order as ty decides) which profile the task runs under; the first non-empty decision wins.",
    options: {
      ...TASK_OPTIONS,
      json: { type: "boolean", help: 'print {"plugin","claude_config_dir","hold","reason"}' },
      force: {
        type: "boolean",
        help: "ask even for a task ty would not route (executor not claude, or its own config dir)",
      },
      ...consultOptions("router", "15s"),
    },
    details: [
      "Prints PLUGIN=name, CLAUDE_CONFIG_DIR=dir, HOLD=1 (when the task must wait) and REASON=text,",
      "one a line; nothing on stdout when no router decided, and an info line on stderr saying why.",
      "Routers that fail or time out are logged and skipped. As ty's executor, only tasks whose",
      "executor is empty or claude and that name no claude_config_dir are routed, unless --force.",
      "A leading ~ in the answered dir is expanded.",
      "Exit 0.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const task = await taskOrEmpty(ctx);
    const { runner, consult } = await consultedCall(ctx, "route");
    const force = ctx.values.force === true;
    const decision = await runner.route(task, { ...consult, force });
    if (decision.plugin === "") {
      // Loaded by the route itself already.
      const { whyNotRouted } = await import("../consult/route.ts");
      const asked = runner.handlers(TASK_ROUTE).length;
      const why = asked === 0
        ? `no plugin handles ${quoted(TASK_ROUTE)}`
        : (force ? null : whyNotRouted(task)) ??
          `${asked} ${asked === 1 ? "router" : "routers"} asked, none named a config dir or held`;
      ctx.log.log("info", `No router decided: ${why}`);
    }
    if (ctx.values.json) await ctx.print(jsonText(decision));
    else if (decision.plugin !== "") await ctx.print(keyValueLines(decision, ctx.log));
    return 0;
  },
};

export const place: CommandModule = {
  spec: {
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
  },
  async run(ctx: CommandContext): Promise<number> {
    const task = await taskOrEmpty(ctx);
    const remoteRequired = ctx.values["remote-required"] === true;
    const { runner, consult } = await consultedCall(ctx, "placement");
    const placement = await runner.resolvePlacement(
      { ...task, remote_required: remoteRequired },
      consult,
    );
    await ctx.print(jsonText(placement));
    if (remoteRequired && placement.target === "") {
      ctx.log.log("error", "No placement handler named a target, and --remote-required was given", {
        handlers: runner.handlers(TASK_PLACEMENT).length,
      });
      return EXIT.noTarget.code;
    }
    return 0;
  },
};

export const hosts: CommandModule = {
  spec: {
    summary:
      "Ask every task.hosts handler where the task could run, and print their merged candidates.",
    options: { ...TASK_OPTIONS, ...consultOptions("handler", "5s") },
    details: [
      'Prints {"hosts":[{"name","target","workdir","detail"}]}. Every handler is asked (all at',
      "once); the lists are merged in plugin-name order, a duplicate target keeping the first entry.",
      "An entry's empty target is filled from its name and the other way round; entries with",
      "neither are dropped. A failing handler contributes nothing (logged). Exit 0.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const task = await taskOrEmpty(ctx);
    const { runner, consult } = await consultedCall(ctx, "hosts");
    await ctx.print(jsonText(await runner.listHosts(task, consult)));
    return 0;
  },
};

function keyValueLines(decision: RouteResult, log: Logger): string {
  const line = (key: string, value: string) => {
    const at = value.search(LINE_END);
    if (at === -1) return `${key}=${escapeControl(value)}`;
    log.log("warn", `Cut ${key} at a line-end character, so that no line can be injected`, {
      key,
      kept: value.slice(0, at),
    });
    return `${key}=${escapeControl(value.slice(0, at))}`;
  };
  const lines = [
    line("PLUGIN", decision.plugin),
    line("CLAUDE_CONFIG_DIR", decision.claude_config_dir),
  ];
  if (decision.hold) lines.push("HOLD=1");
  lines.push(line("REASON", decision.reason));
  return lines.join("\n") + "\n";
}

// Every character some line splitter takes as a line end (Python's str.splitlines, Unicode's
// line and paragraph separators, JavaScript's \u2028/\u2029): a value holding one could inject a
// KEY=VALUE line into whatever parses this output.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const LINE_END = /[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/;
