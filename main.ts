/**
 * The tyhooks command line: parse, dispatch, print, exit. Everything else is in `lib/`.
 *
 * @module
 */

import { type CommandEntry, COMMANDS } from "./lib/cli/commands.ts";
import {
  type CommandContext,
  GLOBAL_OPTIONS,
  type GlobalOptions,
  parseCommandArgs,
  renderHelp,
  renderOptions,
} from "./lib/cli/command.ts";
import { RunError, UsageError } from "./lib/errors.ts";
import { createLogger, LOG_LEVELS, type LogLevel } from "./lib/log.ts";
import { VERSION } from "./lib/version.ts";

const EXIT_USAGE = 64;
// SIGHUP too: hooks run in sessions of their own, so a closed terminal or a dropped ssh session
// would never reach them; tyhooks must end them itself.
const SIGNAL_EXIT = { SIGHUP: 129, SIGINT: 130, SIGTERM: 143 } as const;
type Caught = keyof typeof SIGNAL_EXIT;
/** The signal that interrupted the command, for the exit code even when the command then threw. */
let caught: Caught | undefined;
const encoder = new TextEncoder();

function topHelp(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "Usage: tyhooks [global options] <command> [options]",
    "",
    "Runs ty task-manager plugins and hooks: events, routing, placement, tool-call guards, services.",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Global options:",
    ...renderOptions({
      ...GLOBAL_OPTIONS,
      version: { type: "boolean", help: "print the version" },
    }),
    "",
    'Run "tyhooks <command> --help" for a command\'s options.',
    "Exit codes: 0 ok, 1 failure, 2 blocked, 3 no remote target, 64 usage error, 124 timed out,",
    "130/143 interrupted.",
  ].join("\n") + "\n";
}

/** Finds the command in `args`, skipping global flags (and their values) that come first. */
function findCommand(
  args: string[],
): { entry: CommandEntry; rest: string[] } | { words: string[] } {
  const words: string[] = [];
  const rest: string[] = [];
  let i = 0;
  for (; i < args.length; i++) {
    const arg = args[i];
    if (arg.startsWith("-")) {
      rest.push(arg);
      const name = arg.replace(/^--?/, "");
      if (GLOBAL_OPTIONS[name]?.type === "string" && !arg.includes("=") && i + 1 < args.length) {
        rest.push(args[++i]);
      }
      continue;
    }
    words.push(arg);
    const exact = COMMANDS.find((c) => c.name === words.join(" "));
    if (exact) return { entry: exact, rest: [...rest, ...args.slice(i + 1)] };
    if (!COMMANDS.some((c) => c.name.startsWith(words.join(" ") + " "))) break;
  }
  return { words };
}

function globalsFrom(values: CommandContext["values"]): GlobalOptions {
  const logFormat = values["log-format"] ?? "text";
  if (logFormat !== "text" && logFormat !== "json") {
    throw new UsageError(
      `Invalid value "${logFormat}" for flag "--log-format": expected text or json`,
    );
  }
  const logLevel = values["log-level"] ?? "info";
  if (!LOG_LEVELS.includes(logLevel as LogLevel)) {
    throw new UsageError(
      `Invalid value "${logLevel}" for flag "--log-level": expected ${LOG_LEVELS.join(", ")}`,
    );
  }
  return {
    pluginsDir: values["plugins-dir"] as string | undefined,
    hooksDir: values["hooks-dir"] as string | undefined,
    logFormat,
    logLevel: logLevel as LogLevel,
  };
}

async function print(text: string): Promise<void> {
  await write(encoder.encode(text));
}

async function write(bytes: Uint8Array): Promise<void> {
  // After SIGINT/SIGTERM the command's answer is not an answer (a tool call judged while its
  // guard was being killed, say): the exit code says "interrupted" and stdout stays empty.
  if (caught !== undefined) return;
  let written = 0;
  while (written < bytes.length) written += await Deno.stdout.write(bytes.subarray(written));
}

/** Help for a command group (`tyhooks plugins --help`): its commands. */
function groupHelp(group: string): string | undefined {
  const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  if (members.length === 0) return undefined;
  const width = Math.max(...members.map((c) => c.name.length));
  return [
    `Usage: tyhooks ${group} <command> [options]`,
    "",
    "Commands:",
    ...members.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    `Run "tyhooks ${group} <command> --help" for a command's options.`,
  ].join("\n") + "\n";
}

async function main(args: string[]): Promise<number> {
  if (args.length === 1 && args[0] === "--version") {
    await print(`tyhooks ${VERSION}\n`);
    return 0;
  }
  const found = findCommand(args);
  if (!("entry" in found)) {
    const wantsHelp = args.includes("--help") || args.includes("-h");
    if (found.words.length === 0 && args.length === 0) {
      // No command is a usage error: the help goes where errors go.
      Deno.stderr.writeSync(encoder.encode(topHelp()));
      return EXIT_USAGE;
    }
    if (found.words.length === 0 && wantsHelp) {
      await print(topHelp());
      return 0;
    }
    const group = found.words.length === 1 && wantsHelp ? groupHelp(found.words[0]) : undefined;
    if (group !== undefined) {
      await print(group);
      return 0;
    }
    const what = found.words.length
      ? `Unknown command "${found.words.join(" ")}"`
      : "Missing command";
    throw new UsageError(what, "hint: see tyhooks --help");
  }
  const command = await found.entry.load();
  const { values, positionals } = parseCommandArgs(command.spec, found.rest);
  if (values.help) {
    await print(renderHelp(command.spec));
    return 0;
  }
  const globals = globalsFrom(values);
  const log = createLogger({ format: globals.logFormat, level: globals.logLevel });
  const controller = new AbortController();
  const signals = (Object.keys(SIGNAL_EXIT) as Caught[])
    .filter((name) => !(name === "SIGHUP" && command.spec.ownsHangup));
  const handlers = signals.map((name) => {
    const handler = () => {
      caught ??= name;
      controller.abort(new RunError(`Interrupted by ${name}`));
    };
    Deno.addSignalListener(name, handler);
    return [name, handler] as const;
  });
  try {
    const code = await command.run({
      values,
      positionals,
      globals,
      log,
      print,
      write,
      signal: controller.signal,
    });
    return caught && !command.spec.handlesSignals ? SIGNAL_EXIT[caught] : code;
  } finally {
    for (const [name, handler] of handlers) Deno.removeSignalListener(name, handler);
  }
}

function jsonLogsRequested(args: string[]): boolean {
  return args.includes("--log-format=json") ||
    args.some((a, i) => a === "--log-format" && args[i + 1] === "json");
}

if (import.meta.main) {
  let code: number;
  try {
    code = await main(Deno.args);
  } catch (error) {
    const usage = error instanceof UsageError;
    const message = error instanceof Error ? error.message : String(error);
    const hint = usage && error.hint ? error.hint : undefined;
    // --log-format json promises one JSON object a stderr line, fatal errors included.
    if (jsonLogsRequested(Deno.args)) {
      const line = { time: new Date().toISOString(), level: "error", msg: message, hint };
      Deno.stderr.writeSync(encoder.encode(JSON.stringify(line) + "\n"));
    } else {
      Deno.stderr.writeSync(encoder.encode(`tyhooks: ${message}${hint ? `\n${hint}` : ""}\n`));
    }
    // A command that failed because it was interrupted still exits as interrupted.
    code = caught !== undefined ? SIGNAL_EXIT[caught] : usage ? EXIT_USAGE : 1;
  }
  Deno.exit(code);
}
