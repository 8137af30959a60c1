/**
 * What a command file declares and what it runs with. Commands are small: they turn arguments
 * into library calls and return an exit code. Parsing is in `args.ts`, help in `help.ts`.
 *
 * @module
 */

import type { Logger, LogLevel } from "../log.ts";

/** A bad command line: a flag, an argument, a file named on it. Exit code 64. */
export class UsageError extends Error {
  override name = "UsageError";
  /** A line telling the user how to fix it, printed after the message. */
  readonly hint: string | undefined;
  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
  }
}

/** One flag of a command. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  /** Placeholder shown in help; `FILE` names a file that must exist (or `-`, stdin). */
  value?: string;
  help: string;
}

/** The declaration of a command: the help text is generated from it. */
export interface CommandSpec {
  /** What it does: the first paragraph of its help (the table's `summary` is the short line). */
  summary: string;
  /** Positional part of the usage line, e.g. `<event>`. */
  args?: string;
  /** Positional arguments accepted: [min, max]. */
  positionals?: [number, number];
  options: Record<string, OptionSpec>;
  /** Paragraphs after the option list. */
  details?: string;
  /** The command decides its own exit code on SIGINT/SIGTERM (e.g. `services run` exits 0). */
  handlesSignals?: boolean;
  /** SIGHUP means something else to this command (`serve` reloads); main.ts leaves it alone. */
  ownsHangup?: boolean;
}

/** Global options, accepted before or after the command. */
export interface GlobalOptions {
  pluginsDir: string | undefined;
  hooksDir: string | undefined;
  logFormat: "text" | "json";
  logLevel: LogLevel;
}

/** What a command runs with. */
export interface CommandContext {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
  globals: GlobalOptions;
  log: Logger;
  /** Writes the command's answer to stdout. */
  print(text: string): Promise<void>;
  /** Writes bytes to stdout as they are (an action's binary output). */
  write(bytes: Uint8Array): Promise<void>;
  /** Writes text to stderr as it is, not as a log line (a block's reason for Claude Code). */
  printError(text: string): void;
  /** Aborted when tyhooks gets SIGINT or SIGTERM; pass it to every library call that waits. */
  signal: AbortSignal;
}

/** A command file's exports. */
export interface CommandModule {
  spec: CommandSpec;
  /** Returns the exit code. */
  run(ctx: CommandContext): Promise<number>;
}

/** Options every command accepts. */
export const GLOBAL_OPTIONS: Record<string, OptionSpec> = {
  "plugins-dir": {
    type: "string",
    value: "DIR",
    help: "plugins dir (default $TY_PLUGINS_DIR, else <config>/task/plugins)",
  },
  "hooks-dir": {
    type: "string",
    value: "DIR",
    help: "legacy hooks dir (default <config>/task/hooks)",
  },
  "log-format": { type: "string", value: "text|json", help: "log format on stderr (default text)" },
  "log-level": {
    type: "string",
    value: "LEVEL",
    help: "debug, info, warn or error (default info)",
  },
  help: { type: "boolean", short: "h", help: "show this help" },
};

/** Task options shared by the commands that act on a task. */
export const TASK_OPTIONS: Record<string, OptionSpec> = {
  task: { type: "string", value: "FILE", help: "task JSON from FILE (- = stdin)" },
  "task-json": { type: "string", value: "JSON", help: "task JSON given inline" },
};

/**
 * The flags every consulted command (`route`, `place`, `hosts`, `tool pre`) takes:
 * `--sequential`, `--timeout`, `--deadline`, worded for its handlers ("router", "handler", "hook").
 */
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

/** Reads a string option, or undefined. */
export function stringOption(values: CommandContext["values"], name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}
