/**
 * What a command file declares, and how its arguments are parsed and its help is written.
 * Commands are small: they turn arguments into library calls and return an exit code.
 *
 * @module
 */

import { parseArgs } from "node:util";
import type { Logger, LogLevel } from "../log.ts";
import { UsageError } from "../errors.ts";

/** One flag of a command. */
export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  /** Placeholder shown in help, e.g. `FILE`. */
  value?: string;
  help: string;
}

/** The declaration of a command: the help text is generated from it. */
export interface CommandSpec {
  /** Words that select it, e.g. `plugins list`. */
  name: string;
  /** One line for the command list. */
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

/** Parses `argv` (the words after the command name) against a spec and the global options. */
export function parseCommandArgs(
  spec: CommandSpec,
  argv: string[],
): { values: CommandContext["values"]; positionals: string[] } {
  const options = { ...GLOBAL_OPTIONS, ...spec.options };
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      options: Object.fromEntries(
        Object.entries(options).map((
          [name, o],
        ) => [name, {
          type: o.type,
          multiple: o.multiple ?? false,
          ...(o.short ? { short: o.short } : {}),
        }]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(
      describeParseError(error as Error),
      `hint: see tyhooks ${spec.name} --help`,
    );
  }
  const [min, max] = spec.positionals ?? [0, 0];
  const positionals = parsed.positionals;
  if (!parsed.values.help) {
    if (positionals.length < min) {
      throw new UsageError(
        `Missing argument for "${spec.name}": expected ${spec.args ?? "more arguments"}`,
        `hint: see tyhooks ${spec.name} --help`,
      );
    }
    if (positionals.length > max) {
      throw new UsageError(
        `Unexpected argument "${positionals[max]}" for "${spec.name}"`,
        `hint: see tyhooks ${spec.name} --help`,
      );
    }
  }
  return { values: parsed.values as CommandContext["values"], positionals };
}

// node:util phrases its errors for Node users; restate them in our style, keeping the flag name.
function describeParseError(error: Error): string {
  const flag = /'(-[^' ]+)/.exec(error.message)?.[1];
  const code = (error as { code?: string }).code;
  if (code === "ERR_PARSE_ARGS_UNKNOWN_OPTION") return `Unknown flag "${flag}"`;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return error.message.includes("argument missing")
      ? `Missing value for flag "${flag}"`
      : `Flag "${flag}" takes no value`;
  }
  return error.message;
}

/** Renders a command's `--help`. */
export function renderHelp(spec: CommandSpec): string {
  const lines = [
    `Usage: tyhooks ${spec.name}${spec.args ? ` ${spec.args}` : ""} [options]`,
    "",
    spec.summary,
    "",
  ];
  lines.push(
    "Options:",
    ...renderOptions(spec.options),
    "",
    "Global options:",
    ...renderOptions(GLOBAL_OPTIONS),
  );
  if (spec.details) lines.push("", spec.details.trim());
  return lines.join("\n") + "\n";
}

/** Renders an option table. */
export function renderOptions(options: Record<string, OptionSpec>): string[] {
  const rows = Object.entries(options).map(([name, o]) => {
    const flag = `${o.short ? `-${o.short}, ` : "    "}--${name}${o.value ? ` ${o.value}` : ""}`;
    return [flag, o.help + (o.multiple ? " (repeatable)" : "")];
  });
  const width = Math.max(0, ...rows.map(([flag]) => flag.length));
  return rows.map(([flag, help]) => `  ${flag.padEnd(width)}  ${help}`);
}

/** Reads a string option, or undefined. */
export function stringOption(values: CommandContext["values"], name: string): string | undefined {
  const value = values[name];
  return typeof value === "string" ? value : undefined;
}
