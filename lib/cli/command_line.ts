/**
 * The command line: which command the words name, its flags and arguments, and the command
 * ready to run, or the text to print instead (help, the version, an unknown command). `main.ts`
 * adds the signals and the exit. It keeps the conventions users carry from git, cargo and deno:
 * a string flag takes the next word whatever it starts with, `--flag=value`, `--help` and
 * `--version` anywhere, a did-you-mean for every typo.
 *
 * @module
 */

import {
  type CommandContext,
  type CommandEntry,
  type CommandSpec,
  DETACHED_CHILD_FLAG,
  EXIT,
  GLOBAL_OPTIONS,
  type GlobalOptions,
  LINE_OPTIONS,
  type OptionSpec,
  UsageError,
} from "./types.ts";
import { COMMANDS } from "./commands.ts";
import { createLogger, LOG_LEVELS, type LogLevel } from "../log.ts";
import { closest, jsonText, quoted } from "../text.ts";
import { writeAll } from "../fs.ts";
import { InputError, NotFoundError } from "../errors.ts";

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

/** Reads `args` into a command to run, or the text to print (help, the version) instead. */
export async function prepare(args: string[], output: Output): Promise<Prepared> {
  if (args.length === 1 && args[0] === DETACHED_CHILD_FLAG) return await prepareDetached(output);
  const words = wordsOf(args);
  if (words[0] === "help") {
    return { code: EXIT.success.code, stdout: await helpFor(words.slice(1)) };
  }
  const found = findCommand(args);
  if (!("entry" in found)) return await noCommand(found, args);
  const command = await found.entry.load();
  const meta = metaFlags(optionsOf(found.entry, command.spec), found.rest);
  if (meta.help) return { code: EXIT.success.code, stdout: await helpFor(found.typed.split(" ")) };
  if (meta.version) return { code: EXIT.success.code, stdout: await versionLine() };
  const end = command.spec.passesArgs ? found.rest.indexOf("--") : -1;
  const read = end === -1 ? found.rest : found.rest.slice(0, end);
  const passed = end === -1 ? [] : found.rest.slice(end + 1);
  const { values, positionals } = await parseCommandArgs(found.entry, command.spec, read);
  const globals = globalsFrom(values);
  const log = createLogger({ format: globals.logFormat, level: globals.logLevel });
  return {
    spec: command.spec,
    onFailure: typeof values["on-failure"] === "string" ? values["on-failure"] : undefined,
    run: (signal) =>
      command.run({
        values,
        positionals,
        passed,
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
    write: (bytes) => writeAll(Deno.stderr, bytes),
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
    else if (LINE_OPTIONS[args[i].slice(2)]?.type === "string") i++;
  }
  return words;
}

// No command named: the top help or a group's, when asked for or when the line is only global
// flags and group words (then on stderr, a usage error); else the typo, with a did-you-mean.
async function noCommand(
  found: Extract<Found, { words: string[] }>,
  args: string[],
): Promise<Prepared> {
  const group = found.words.join(" ");
  if (found.words.length > 0 && !isGroup(group)) throw unknownCommand(found.words);
  const meta = metaFlags(LINE_OPTIONS, args);
  if (meta.version) return { code: EXIT.success.code, stdout: await versionLine() };
  if (!meta.help) checkFlags(LINE_OPTIONS, args, group);
  const missing = group === "" ? "No command given" : `No command given after ${quoted(group)}`;
  // One JSON object a stderr line, as --log-format json promises: the usage text does not fit.
  if (!meta.help && flagValues(args, "log-format").at(-1) === "json") {
    throw new UsageError(missing, `hint: see tyhooks help${group === "" ? "" : ` ${group}`}`);
  }
  const { groupHelp, helpWidth, topHelp } = await import("./help.ts");
  const width = meta.help ? helpWidth() : 80;
  const text = found.words.length === 0 ? topHelp(width) : groupHelp(group, width)!;
  return meta.help
    ? { code: EXIT.success.code, stdout: text }
    : { code: EXIT.usage.code, stderr: `tyhooks: ${missing}\n\n${text}` };
}

// Every flag before "--" must be one of `options` (`tyhooks -v`, `tyhooks --verison`).
function checkFlags(options: Record<string, OptionSpec>, args: string[], command: string): void {
  for (let i = 0; i < args.length && args[i] !== "--"; i++) {
    if (!args[i].startsWith("-") || args[i] === "-") continue;
    if (optionNamed(options, args[i]) === undefined) throw unknownFlag(options, args[i], command);
    if (takesValue(options, args[i])) i++;
  }
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
    const { spec } = await found.entry.load();
    return commandHelp(found.entry, { spec, options: optionsOf(found.entry, spec), width });
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
  const empty = ["plugins-dir", "hooks-dir"].find((flag) => values[flag] === "");
  if (empty) throw new UsageError(`Flag "--${empty}" needs a directory, not an empty value`);
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
 * True when the line is an agent's hook command: `agent AGENT` (not `agent install`) or a
 * `--claude` bridge, also when a flag took the word `agent` for its value (`--plugins-dir $UNSET
 * agent claude`). Read from the raw words, so it holds even when the line cannot be parsed; loads
 * the agent table only for that last form.
 */
export async function isAgentLine(args: string[]): Promise<boolean> {
  const end = args.indexOf("--");
  const words = end === -1 ? args : args.slice(0, end);
  // `--claude=true` is a usage error, but whoever wrote it meant the bridge.
  if (words.some((w) => w === "--claude" || w.startsWith("--claude="))) return true;
  const [first, second] = wordsOf(args);
  if (first === "agent") return second === undefined || byName(`agent ${second}`) === undefined;
  // Only where "agent" is what a global flag took for its value, followed by an agent's name.
  const at = words.indexOf("agent");
  const flag = words[at - 1];
  if (at < 1 || at + 1 === words.length || !flag.startsWith("--")) return false;
  if (LINE_OPTIONS[flag.slice(2)]?.type !== "string") return false;
  const { agentSpec } = await import("../agents/table.ts");
  return agentSpec(words[at + 1]) !== undefined;
}

/**
 * The line a fatal error prints on stderr: text, or one JSON object with `--log-format json`;
 * `agentLine` as {@linkcode isAgentLine} says.
 */
export function describeFailure(
  error: unknown,
  args: string[],
  { agentLine }: { agentLine: boolean },
): string {
  const message = error instanceof Error ? error.message : String(error);
  // The model reads an agent hook's stderr as the reason: the message alone, as text (Gemini CLI
  // would take a JSON line for its answer), and no hint on getting around the guard.
  if (agentLine) return `tyhooks: ${message}\n`;
  // UsageError, InputError, NotFoundError and RunError carry the fix when it is known.
  const hint = (error as { hint?: unknown })?.hint;
  const fix = typeof hint === "string" && hint !== "" ? hint : undefined;
  // --log-format json promises one JSON object a stderr line, fatal errors included.
  if (flagValues(args, "log-format").at(-1) === "json") {
    // A field named hint needs no "hint: " before its text, as the log's own lines have none.
    const hint = fix?.replace(/^hint: /, "");
    const line = { time: new Date().toISOString(), level: "error", msg: message, hint };
    return jsonText(line);
  }
  return `tyhooks: ${message}${fix ? `\n${fix}` : ""}\n`;
}

/** The exit code of a command that failed with `error`: usage for a bad line or input, else 1. */
export function failureCode(error: unknown): number {
  const usage = error instanceof UsageError || error instanceof InputError ||
    error instanceof NotFoundError;
  return usage ? EXIT.usage.code : EXIT.failure.code;
}

// Loaded only for --version: a warm call never asks.
async function versionLine(): Promise<string> {
  const { VERSION } = await import("../version.ts");
  return `tyhooks ${VERSION}\n`;
}

/** What the words of a command line name. */
type Found =
  | { entry: CommandEntry; typed: string; rest: string[] }
  | { words: string[]; rest: string[] };

/** Every name a command answers to (its name first, then its aliases). */
function namesOf(entry: CommandEntry): string[] {
  return [entry.name, ...(entry.aliases ?? [])];
}

/** True when some command's name continues `words` (`plugins` for `plugins list`). */
function isGroup(words: string): boolean {
  return COMMANDS.some((c) => namesOf(c).some((name) => name.startsWith(`${words} `)));
}

function byName(words: string): CommandEntry | undefined {
  return COMMANDS.find((c) => namesOf(c).includes(words));
}

/**
 * Finds the command in `args`: the longest run of words naming one (`hosts`, `hosts sync`),
 * global flags skipped. A group word then a word naming none of its commands is an unknown
 * command (`plugins lst`), unless the group word takes arguments (`agent claude`).
 */
function findCommand(args: string[]): Found {
  const words: string[] = [];
  const used = new Set<number>();
  let found: { entry: CommandEntry; typed: string } | undefined;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--") break;
    if (arg.startsWith("-") && arg !== "-") {
      if (optionNamed(GLOBAL_OPTIONS, arg) === undefined && found !== undefined) break;
      if (takesValue(GLOBAL_OPTIONS, arg)) i++;
      continue;
    }
    const typed = [...words, arg].join(" ");
    const entry = byName(typed);
    if (entry === undefined && !isGroup(typed)) {
      if (found !== undefined && (!isGroup(found.typed) || found.entry.takesArguments)) break;
      // `tyhooks --plugin-dir x plugins`: the word is a mistyped global flag's value, and the
      // flag is what to report.
      const before = args[i - 1];
      if (found === undefined && i > 0 && before.startsWith("--") && !before.includes("=")) {
        if (optionNamed(GLOBAL_OPTIONS, before) === undefined) {
          throw unknownFlag(GLOBAL_OPTIONS, before, "");
        }
      }
      return { words: [...words, arg], rest: args.filter((_, j) => !used.has(j)) };
    }
    words.push(arg);
    used.add(i);
    if (entry !== undefined) found = { entry, typed };
  }
  const rest = args.filter((_, j) => !used.has(j));
  // Words past the last full name ("tool" in "tool"): a group without its command.
  if (found === undefined || found.typed !== words.join(" ")) return { words, rest };
  return { entry: found.entry, typed: found.typed, rest };
}

// Words that are no command but that people type as one: `help` is one, `version` a flag.
const META_WORDS: Record<string, string> = { help: "help", version: "--version" };

/** `Unknown command "plugins lst"` with the closest command name, for words that name none. */
function unknownCommand(words: string[]): UsageError {
  const typed = words.join(" ");
  const names = [...COMMANDS.flatMap(namesOf), ...Object.keys(META_WORDS)];
  const near = Object.hasOwn(META_WORDS, typed) ? typed : closest(typed, names);
  const suggestion = near === undefined ? undefined : META_WORDS[near] ?? near;
  return new UsageError(
    `Unknown command "${typed}"`,
    suggestion ? `hint: did you mean "tyhooks ${suggestion}"?` : "hint: see tyhooks help",
  );
}

function takesValue(options: Record<string, OptionSpec>, arg: string): boolean {
  if (arg.includes("=")) return false;
  return optionNamed(options, arg)?.[1].type === "string";
}

function optionNamed(
  options: Record<string, OptionSpec>,
  arg: string,
): [string, OptionSpec] | undefined {
  if (arg.startsWith("--")) {
    const name = arg.slice(2).split("=", 1)[0];
    return Object.hasOwn(options, name) ? [name, options[name]] : undefined;
  }
  const short = arg.slice(1, 2);
  return Object.entries(options).find(([, o]) => o.short === short);
}

/**
 * Rewrites each `--flag value` of a string flag as `--flag=value`, so a value starting with `-`
 * (`--error "-bash: x: not found"`) is taken as it is: the words a host passes must never change
 * how its call is read. Unknown flags are reported here.
 */
function glueValues(
  options: Record<string, OptionSpec>,
  argv: string[],
  command: string,
): string[] {
  const out: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") {
      out.push(...argv.slice(i));
      break;
    }
    if (!arg.startsWith("-") || arg === "-") {
      out.push(arg);
      continue;
    }
    const option = optionNamed(options, arg);
    if (option === undefined) throw unknownFlag(options, arg, command);
    const [name, spec] = option;
    // `--name` or `-x` alone: the value is the next word, whatever it looks like.
    if (spec.type === "string" && (arg === `--${name}` || arg.length === 2)) {
      if (i + 1 >= argv.length) {
        throw new UsageError(
          `Missing value for flag "--${name}"`,
          `hint: --${name} ${spec.value ?? "VALUE"}`,
        );
      }
      out.push(`--${name}=${argv[++i]}`);
      continue;
    }
    out.push(arg);
  }
  return out;
}

function unknownFlag(options: Record<string, OptionSpec>, arg: string, command: string) {
  const flag = arg.startsWith("--") ? arg.split("=", 1)[0] : arg.slice(0, 2);
  // A long flag within a few edits of one, a short one that differs in case (`-v` for `-V`).
  const suggestion = flag.startsWith("--")
    ? closest(flag.slice(2), Object.keys(options))
    : Object.entries(options).find(([, o]) => o.short?.toLowerCase() === flag[1].toLowerCase());
  const hint = typeof suggestion === "string"
    ? `hint: did you mean "--${suggestion}"?`
    : suggestion !== undefined
    ? `hint: did you mean "-${suggestion[1].short}"?`
    : `hint: see tyhooks ${command ? `${command} ` : ""}--help`;
  return new UsageError(`Unknown flag "${flag}"`, hint);
}

/** What `--help`/`-h` and `--version`/`-V` on the line ask for, wherever they stand. */
function metaFlags(
  options: Record<string, OptionSpec>,
  argv: string[],
): { help: boolean; version: boolean } {
  let help = false;
  let version = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--") break;
    if (arg === "--help" || arg === "-h") help = true;
    else if (arg === "--version" || arg === "-V") version = true;
    else if (arg.startsWith("-") && takesValue(options, arg)) i++;
  }
  return { help, version };
}

/**
 * The options a command accepts: its own, the global ones, and `--json` everywhere (a host program
 * that passes it to every call must never get a usage error, and lose a post hook, for it).
 */
function optionsOf(entry: CommandEntry, spec: CommandSpec): Record<string, OptionSpec> {
  const why = entry.jsonOutput ? "the output is always JSON" : "this command prints no document";
  const json: OptionSpec = { type: "boolean", help: `accepted for symmetry: ${why}` };
  return { ...spec.options, json: spec.options.json ?? json, ...LINE_OPTIONS };
}

/** Parses `argv` (the words after the command name) against a command's options. */
async function parseCommandArgs(
  entry: CommandEntry,
  spec: CommandSpec,
  argv: string[],
): Promise<{ values: CommandContext["values"]; positionals: string[] }> {
  const options = optionsOf(entry, spec);
  const hint = `hint: see tyhooks ${entry.name} --help`;
  const glued = glueValues(options, argv, entry.name);
  const parsed = plainLine(options, glued) ?? await parseArgsOf(options, glued, hint);
  const [min, max] = spec.positionals ?? [0, 0];
  const positionals = parsed.positionals;
  if (positionals.length < min) {
    throw new UsageError(
      `Missing argument for "${entry.name}": expected ${spec.args ?? "more arguments"}`,
      hint,
    );
  }
  if (positionals.length > max) {
    throw new UsageError(`Unexpected argument "${positionals[max]}" for "${entry.name}"`, hint);
  }
  const values = parsed.values as CommandContext["values"];
  checkFiles(options, values);
  return { values, positionals };
}

/** The line read by `node:util`'s `parseArgs`, for what {@linkcode plainLine} leaves to it. */
async function parseArgsOf(
  options: Record<string, OptionSpec>,
  args: string[],
  hint: string,
): Promise<{ values: Record<string, unknown>; positionals: string[] }> {
  // node:util makes Deno evaluate about 40 of its Node modules: only an unusual line needs it.
  const { parseArgs } = await import("node:util");
  try {
    return parseArgs({
      args,
      options: Object.fromEntries(
        Object.entries(options).map(([name, o]) => [name, {
          type: o.type,
          multiple: o.multiple ?? false,
          ...(o.short ? { short: o.short } : {}),
        }]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (error) {
    throw new UsageError(describeParseError(error as Error), hint);
  }
}

/**
 * The line as `parseArgs` reads it, when it holds only positionals, `--flag` and `--flag=value`
 * (an ordinary line after {@linkcode glueValues}); undefined for anything else.
 */
function plainLine(
  options: Record<string, OptionSpec>,
  args: string[],
): { values: Record<string, string | boolean | string[]>; positionals: string[] } | undefined {
  const values: Record<string, string | boolean | string[]> = {};
  const positionals: string[] = [];
  for (const arg of args) {
    if (!arg.startsWith("-") || arg === "-") {
      positionals.push(arg);
      continue;
    }
    if (!arg.startsWith("--") || arg === "--") return undefined;
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!Object.hasOwn(options, name)) return undefined;
    const { type, multiple } = options[name];
    if (type === "boolean") {
      if (eq !== -1 || multiple) return undefined;
      values[name] = true;
    } else if (eq === -1) {
      return undefined;
    } else if (multiple) {
      ((values[name] ??= []) as string[]).push(arg.slice(eq + 1));
    } else {
      values[name] = arg.slice(eq + 1);
    }
  }
  return { values, positionals };
}

// node:util phrases its errors for Node users; restate them in our style, keeping the flag name.
function describeParseError(error: Error): string {
  const flag = /'(-[^' ]+)/.exec(error.message)?.[1];
  const code = (error as { code?: string }).code;
  if (code === "ERR_PARSE_ARGS_INVALID_OPTION_VALUE") {
    return `Flag "${flag?.split("=", 1)[0]}" takes no value`;
  }
  return error.message;
}

/**
 * A flag whose placeholder is `FILE` names a file to read: one that does not exist is a usage
 * error before anything runs, the same exit code for every such flag.
 */
function checkFiles(options: Record<string, OptionSpec>, values: CommandContext["values"]): void {
  for (const [name, option] of Object.entries(options)) {
    if (option.value !== "FILE") continue;
    const value = values[name];
    for (const path of Array.isArray(value) ? value : typeof value === "string" ? [value] : []) {
      if (path === "-") continue;
      try {
        Deno.statSync(path);
      } catch (error) {
        if (!(error instanceof Deno.errors.NotFound)) continue; // Reported when read.
        throw new UsageError(`File "${path}" given to "--${name}" does not exist`);
      }
    }
  }
}
