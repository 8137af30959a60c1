/**
 * From the words of a command line to a command ready to run, or to the text to print instead
 * (help, the version, an unknown command). `main.ts` adds the signals and the exit.
 *
 * @module
 */

import {
  type CommandContext,
  type CommandSpec,
  GLOBAL_OPTIONS,
  type GlobalOptions,
  UsageError,
} from "./commands.ts";
import {
  findCommand,
  type Found,
  isGroup,
  metaFlags,
  optionsOf,
  parseCommandArgs,
  unknownCommand,
  VERSION_OPTION,
} from "./args.ts";
import { createLogger, LOG_LEVELS, type LogLevel } from "../log.ts";

/** Where a command's answer goes: stdout, through `main.ts`. */
export interface Output {
  print(text: string): Promise<void>;
  write(bytes: Uint8Array): Promise<void>;
  printError(text: string): void;
}

/** A command line read: text to print and an exit code, or a command to run. */
export type Prepared =
  | { code: number; stdout?: string; stderr?: string }
  | {
    spec: CommandSpec;
    /** The line's `--on-failure` as parsed (the last one given), if any. */
    onFailure?: string;
    run(signal: AbortSignal): Promise<number>;
  };

const GLOBAL_AND_VERSION = { ...GLOBAL_OPTIONS, ...VERSION_OPTION };

/** The whole command line of a background run started by `--detach`: its work is on stdin. */
export const DETACHED_CHILD_FLAG = "--detached-child";

/**
 * Reads `args`: finds the command, answers `help`, `--help` and `--version` wherever they stand,
 * and parses the command's flags.
 *
 * @throws {UsageError} For an unknown command or flag, a missing or bad value, a missing file.
 */
export async function prepare(args: string[], output: Output): Promise<Prepared> {
  if (args.length === 1 && args[0] === DETACHED_CHILD_FLAG) return await prepareDetached(output);
  const words = wordsOf(args);
  if (words[0] === "help") return { code: 0, stdout: await helpFor(words.slice(1)) };
  const found = findCommand(args);
  if (!("entry" in found)) return await noCommand(found, args);
  const command = await found.entry.load();
  const meta = metaFlags(optionsOf(found.entry, command.spec), found.rest);
  if (meta.help) return { code: 0, stdout: await helpFor(found.typed.split(" ")) };
  if (meta.version) return { code: 0, stdout: await versionLine() };
  const { values, positionals } = await parseCommandArgs(found.entry, command.spec, found.rest);
  const globals = globalsFrom(values);
  const log = createLogger({ format: globals.logFormat, level: globals.logLevel });
  return {
    spec: command.spec,
    onFailure: typeof values["on-failure"] === "string" ? values["on-failure"] : undefined,
    run: (signal) =>
      command.run({
        values,
        positionals,
        globals,
        log,
        ...output,
        signal,
        runLine: (line, lineSignal) => runLine(line, output, lineSignal),
      }),
  };
}

/** A command line run from within another command (`spool run`): see `runLine`. */
async function runLine(args: string[], output: Output, signal: AbortSignal): Promise<number> {
  const prepared = await prepare(args, toLog(output));
  if (!("code" in prepared)) return await prepared.run(signal);
  output.printError((prepared.stdout ?? "") + (prepared.stderr ?? ""));
  return prepared.code;
}

// A command's answer sent where its log goes: stderr.
function toLog(output: Output): Output {
  return {
    print: (text) => Promise.resolve(output.printError(text)),
    write: async (bytes) => {
      for (let at = 0; at < bytes.length;) at += await Deno.stderr.write(bytes.subarray(at));
    },
    printError: output.printError,
  };
}

/**
 * A background run started by `--detach`: its command line comes on stdin (see
 * lib/process/detach.ts), acknowledged on stdout; its answer then goes to stderr, the log.
 */
async function prepareDetached(output: Output): Promise<Prepared> {
  const { receiveDetached } = await import("../process/detach.ts");
  const args = await receiveDetached(output.write);
  if (args.includes(DETACHED_CHILD_FLAG)) throw new UsageError("A detached run cannot detach");
  return await prepare(args, toLog(output));
}

// The words of the line that are not global flags or their values.
function wordsOf(args: string[]): string[] {
  const words: string[] = [];
  for (let i = 0; i < args.length; i++) {
    if (args[i] === "--") break;
    if (!args[i].startsWith("-") || args[i] === "-") words.push(args[i]);
    else if (GLOBAL_AND_VERSION[args[i].slice(2)]?.type === "string") i++;
  }
  return words;
}

async function noCommand(
  found: Extract<Found, { words: string[] }>,
  args: string[],
): Promise<Prepared> {
  const { groupHelp, helpWidth, topHelp } = await import("./help.ts");
  const meta = metaFlags(GLOBAL_AND_VERSION, args);
  const group = found.words.join(" ");
  if (meta.version) return { code: 0, stdout: await versionLine() };
  if (found.words.length === 0) {
    // No command is a usage error: the help goes where errors go.
    return meta.help
      ? { code: 0, stdout: topHelp(helpWidth()) }
      : { code: 64, stderr: topHelp(80) };
  }
  if (isGroup(group)) {
    return meta.help
      ? { code: 0, stdout: groupHelp(group, helpWidth()) }
      : { code: 64, stderr: groupHelp(group, 80) };
  }
  throw unknownCommand(found.words);
}

/** `tyhooks help [COMMAND]`: the top help, a group's, or a command's. */
async function helpFor(words: string[]): Promise<string> {
  // Help is for people: a command's run does not load it.
  const { commandHelp, groupHelp, helpWidth, topHelp } = await import("./help.ts");
  const width = helpWidth();
  if (words.length === 0) return topHelp(width);
  const typed = words.join(" ");
  const found = findCommand(words);
  if ("entry" in found && found.typed === typed) {
    // A group word that also runs a command ("plugins") shows the group; "hosts" is a command.
    if (found.entry.name !== typed && isGroup(typed)) return groupHelp(typed, width)!;
    return commandHelp(found.entry, (await found.entry.load()).spec, width);
  }
  const group = groupHelp(typed, width);
  if (group !== undefined) return group;
  throw unknownCommand(words);
}

function globalsFrom(values: CommandContext["values"]): GlobalOptions {
  const logFormat = values["log-format"] ?? "text";
  if (logFormat !== "text" && logFormat !== "json") {
    throw new UsageError(
      `Invalid value "${logFormat}" for flag "--log-format": expected text or json`,
    );
  }
  // Claude Code hands a blocked call's whole stderr to the model as the reason: there, only
  // errors are logged unless asked otherwise.
  const logLevel = values["log-level"] ?? (values.claude === true ? "error" : "info");
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new UsageError(
      `Invalid value "${logLevel}" for flag "--log-level": expected ${LOG_LEVELS.join(", ")}`,
    );
  }
  // `--plugins-dir "$DIR"` with DIR unset must not mean "wherever the caller stands".
  for (const flag of ["plugins-dir", "hooks-dir"]) {
    if (values[flag] === "") {
      throw new UsageError(`Flag "--${flag}" needs a directory, not an empty value`);
    }
  }
  return {
    pluginsDir: values["plugins-dir"] as string | undefined,
    hooksDir: values["hooks-dir"] as string | undefined,
    logFormat,
    logLevel: logLevel as LogLevel,
  };
}

/** The words `value` of flag `--name` on the line (`--name value` or `--name=value`). */
function flagValues(args: string[], name: string): string[] {
  const values: string[] = [];
  for (let i = 0; i < args.length && args[i] !== "--"; i++) {
    if (args[i] === `--${name}` && i + 1 < args.length) values.push(args[++i]);
    else if (args[i].startsWith(`--${name}=`)) values.push(args[i].slice(name.length + 3));
  }
  return values;
}

/**
 * True when the line asks for Claude Code's contract (`--claude`) without `--on-failure allow`:
 * then every failure of tyhooks itself, a usage error included, must read as "blocked" (exit 2),
 * since Claude Code lets a call through on any other non-zero exit. `--claude` is looked for in
 * the raw words, so it holds even when the line cannot be parsed; `onFailure` is the policy as
 * the parser read it (undefined when the line could not be parsed: then no policy was given that
 * can be trusted, and the line fails closed).
 */
export function failsClosed(args: string[], onFailure: string | undefined): boolean {
  const end = args.indexOf("--");
  const words = end === -1 ? args : args.slice(0, end);
  // `--claude=true` is a usage error, but whoever wrote it meant the bridge: it must fail closed.
  const claude = words.some((w) => w === "--claude" || w.startsWith("--claude="));
  return claude && onFailure !== "allow";
}

/** The line a fatal error prints on stderr: text, or one JSON object with `--log-format json`. */
export function describeFailure(error: unknown, args: string[]): string {
  const message = error instanceof Error ? error.message : String(error);
  // UsageError, InputError, NotFoundError and RunError carry the fix when it is known.
  const hint = (error as { hint?: unknown })?.hint;
  const fix = typeof hint === "string" && hint !== "" ? hint : undefined;
  // --log-format json promises one JSON object a stderr line, fatal errors included.
  if (flagValues(args, "log-format").at(-1) === "json") {
    return JSON.stringify({
      time: new Date().toISOString(),
      level: "error",
      msg: message,
      hint: fix,
    }) +
      "\n";
  }
  return `tyhooks: ${message}${fix ? `\n${fix}` : ""}\n`;
}

// Loaded only for --version: a warm call never asks.
async function versionLine(): Promise<string> {
  const { VERSION } = await import("../version.ts");
  return `tyhooks ${VERSION}\n`;
}
