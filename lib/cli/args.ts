/**
 * Reading the command line: which command the words name, and its flags and arguments, with the
 * conventions users carry from git, cargo and deno (a string flag takes the next word whatever it
 * starts with, `--flag=value`, `--help`/`--version` anywhere, a did-you-mean for every typo).
 *
 * @module
 */

import {
  type CommandContext,
  type CommandEntry,
  COMMANDS,
  type CommandSpec,
  GLOBAL_OPTIONS,
  type OptionSpec,
  UsageError,
} from "./commands.ts";
import { closest } from "../text.ts";

/** What the words of a command line name. */
export type Found =
  | { entry: CommandEntry; typed: string; rest: string[] }
  | { words: string[]; rest: string[] };

/** Every name a command answers to (its name first, then its aliases). */
export function namesOf(entry: CommandEntry): string[] {
  return [entry.name, ...(entry.aliases ?? [])];
}

/** True when some command's name continues `words` (`plugins` for `plugins list`). */
export function isGroup(words: string): boolean {
  return COMMANDS.some((c) => namesOf(c).some((name) => name.startsWith(`${words} `)));
}

function byName(words: string): CommandEntry | undefined {
  return COMMANDS.find((c) => namesOf(c).includes(words));
}

/**
 * Finds the command in `args`: the longest run of words that names one (so `hosts` and
 * `hosts sync` can both be commands), skipping global flags and their values on the way.
 * A group word followed by a word that names none of its commands is an unknown command
 * (`plugins lst`); commands that are also groups therefore take no positional arguments.
 * The command's own flags come after its words: the first one ends the search.
 */
export function findCommand(args: string[]): Found {
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
      if (found !== undefined && !isGroup(found.typed)) break;
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

/** `Unknown command "plugins lst"` with the closest command name, for words that name none. */
export function unknownCommand(words: string[]): UsageError {
  const typed = words.join(" ");
  const names = COMMANDS.flatMap(namesOf);
  const suggestion = closest(typed, names);
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
 * Rewrites every `--flag value` of a string flag as `--flag=value`, so the value is taken as it
 * is even when it starts with `-` (`--error "-bash: x: not found"`, `--result -1`): the words a
 * host program passes must never change how its call is read. Unknown flags are reported here,
 * with the closest known flag.
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
  const suggestion = flag.startsWith("--")
    ? closest(flag.slice(2), Object.keys(options))
    : undefined;
  return new UsageError(
    `Unknown flag "${flag}"`,
    suggestion
      ? `hint: did you mean "--${suggestion}"?`
      : `hint: see tyhooks ${command ? `${command} ` : ""}--help`,
  );
}

/** What `--help`/`-h` and `--version`/`-V` on the line ask for, wherever they stand. */
export function metaFlags(
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
export function optionsOf(entry: CommandEntry, spec: CommandSpec): Record<string, OptionSpec> {
  const help = entry.jsonOutput
    ? "accepted for symmetry: the output is always JSON"
    : "accepted for symmetry: this command prints no document";
  const json: Record<string, OptionSpec> = spec.options.json
    ? {}
    : { json: { type: "boolean", help } };
  return { ...spec.options, ...json, ...GLOBAL_OPTIONS, ...VERSION_OPTION };
}

/** `--version`, accepted anywhere. */
export const VERSION_OPTION: Record<string, OptionSpec> = {
  version: { type: "boolean", short: "V", help: "print the version" },
};

/** Parses `argv` (the words after the command name) against a command's options. */
export async function parseCommandArgs(
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
 * The line read as `parseArgs` reads it, when it holds only positionals, `--flag` for a boolean
 * and `--flag=value` for a string (what {@linkcode glueValues} leaves of an ordinary line);
 * undefined for anything else (`--`, short flags, a value given to a boolean), which goes to
 * `parseArgs` itself.
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
