/**
 * What every file of the command line shares: how a command is declared and what it runs with,
 * the options every command takes, the error of a bad line, and the exit codes. The command
 * table (`commands.ts`) loads the command files; they import this, never the table.
 *
 * @module
 */

import type { Logger, LogLevel } from "../log.ts";
import { parseDuration } from "../async.ts";

/**
 * Every exit code tyhooks gives, and what it means. `main.ts` and the commands return them,
 * `--help` lists them, and README's "Exit codes" lists the same codes (a test compares them).
 */
export const EXIT = {
  success: { code: 0, means: "success" },
  failure: { code: 1, means: "runtime failure" },
  blocked: { code: 2, means: "blocked (tool pre, agent; with agent or --claude, any failure)" },
  noTarget: { code: 3, means: "no remote target (place --remote-required)" },
  usage: { code: 64, means: "usage error" },
  timedOut: { code: 124, means: "action timed out (plugins run)" },
  // 128 + the signal's number, as shells report a death by signal. SIGHUP too: hooks run in
  // sessions of their own, so a closed terminal never reaches them and tyhooks ends them itself.
  SIGHUP: { code: 129, means: "interrupted by SIGHUP" },
  SIGINT: { code: 130, means: "interrupted by SIGINT" },
  // Ctrl-\ at a terminal: stopped as SIGTERM stops it, or its services and hooks, each in a
  // session of its own, would run on without it.
  SIGQUIT: { code: 131, means: "interrupted by SIGQUIT" },
  SIGTERM: { code: 143, means: "interrupted by SIGTERM" },
} as const;

/** The signals that interrupt a command, each with its exit code in {@linkcode EXIT}. */
export const INTERRUPTS = ["SIGHUP", "SIGINT", "SIGQUIT", "SIGTERM"] as const;

/** A signal that interrupts a command. */
export type Interrupt = typeof INTERRUPTS[number];

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

/** One row of the command table. */
export interface CommandEntry {
  /** Words that select it, e.g. `plugins list`. */
  name: string;
  /**
   * Other words that select it: `plugins ls`, or a group word alone (`plugins` runs
   * `plugins list`). A command that is also a group takes no positional arguments, unless it
   * says {@linkcode CommandEntry.takesArguments}.
   */
  aliases?: string[];
  /** One line for the command list. */
  summary: string;
  /** Command lines shown at the end of its help; the first also in its group's help. */
  examples: string[];
  /** Its output is always a JSON document: `--json` is accepted and changes nothing. */
  jsonOutput?: boolean;
  /**
   * It takes positional arguments even when other commands continue its name: a word after it
   * that names none of them is its argument (`agent claude` beside `agent install`).
   */
  takesArguments?: boolean;
  load(): Promise<CommandModule>;
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
  /** Paragraphs after the option list, each refilled to the width (a quoted span kept whole). */
  details?: string;
  /** The command decides its own exit code on an interrupt (e.g. `services run` exits 0). */
  handlesSignals?: boolean;
  /** SIGHUP means something else to this command (`serve` reloads); main.ts leaves it alone. */
  ownsHangup?: boolean;
  /** The words after `--` are not read but handed on as they are, in `passed`. */
  passesArgs?: boolean;
}

/** A command file's exports. */
export interface CommandModule {
  spec: CommandSpec;
  /** Returns the exit code. */
  run(ctx: CommandContext): Promise<number>;
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
  /** The words after `--`, for a command whose spec `passesArgs`; otherwise empty. */
  passed: string[];
  globals: GlobalOptions;
  log: Logger;
  /** Writes the command's answer to stdout. */
  print(text: string): Promise<void>;
  /** Writes bytes to stdout as they are (an action's binary output). */
  write(bytes: Uint8Array): Promise<void>;
  /** Writes text to stderr as it is, not as a log line (a block's reason for Claude Code). */
  printError(text: string): void;
  /** Aborted on an interrupt (see INTERRUPTS); pass it to every library call that waits. */
  signal: AbortSignal;
  /**
   * Runs another tyhooks command line in this process (a spooled one), stopped by `signal`; its
   * answer goes to stderr, as a detached run's does. Returns its exit code.
   */
  runLine(args: string[], signal: AbortSignal): Promise<number>;
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

/** `--version`, accepted anywhere. */
export const VERSION_OPTION: Record<string, OptionSpec> = {
  version: { type: "boolean", short: "V", help: "print the version" },
};

/** What a line takes before (or without) its command: the global options and `--version`. */
export const LINE_OPTIONS: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...VERSION_OPTION };

/** The whole command line of a background run started by `--detach`: its work is on stdin. */
export const DETACHED_CHILD_FLAG = "--detached-child";

/** Reads a string option, or undefined. */
export function stringOption(values: CommandContext["values"], name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}

/** Parses a duration flag; undefined when absent. */
export function durationOption(ctx: CommandContext, name: string): number | undefined {
  const text = stringOption(ctx.values, name);
  if (text === undefined) return undefined;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0) {
    throw new UsageError(
      `Invalid duration "${text}" for flag "--${name}"`,
      "hint: use 500ms, 15s, 2m or plain seconds, more than 0 and at most 24 days",
    );
  }
  return ms;
}
