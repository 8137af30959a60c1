/**
 * The help texts: `tyhooks --help`, a group's (`tyhooks plugins --help`) and a command's, all
 * generated from the command table and the command specs, wrapped to the terminal.
 *
 * @module
 */

import { COMMANDS } from "./commands.ts";
import {
  type CommandEntry,
  type CommandSpec,
  EXIT,
  INTERRUPTS,
  LINE_OPTIONS,
  type OptionSpec,
} from "./types.ts";

/** The width help is wrapped to: the terminal's, or 80 when stdout is not a terminal. */
export function helpWidth(): number {
  try {
    if (Deno.stdout.isTerminal()) return Math.max(40, Deno.consoleSize().columns);
  } catch {
    // No console size to be had (a pseudo-terminal without one): the default below.
  }
  return 80;
}

/**
 * The words of `text`, a quoted span (`"sh -c <command>"`) kept as one when it fits `width`:
 * a command or a value in quotes is read, and copied, whole.
 */
function unitsOf(text: string, width: number): string[] {
  const units: string[] = [];
  let span: string[] = [];
  for (const word of text.split(/\s+/).filter((w) => w !== "")) {
    span.push(word);
    const joined = span.join(" ");
    if (joined.split('"').length % 2 === 0) continue; // A quote is still open.
    units.push(...(joined.length <= width ? [joined] : span));
    span = [];
  }
  return [...units, ...span];
}

/** Words of `text` filled into lines of at most `width`, each line after the first indented. */
function fill(text: string, width: number, indent: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of unitsOf(text, width - indent)) {
    const room = width - (lines.length === 0 ? 0 : indent);
    if (line !== "" && line.length + 1 + word.length > room) {
      lines.push(line);
      line = word;
    } else {
      line = line === "" ? word : `${line} ${word}`;
    }
  }
  lines.push(line);
  return lines.map((l, i) => (i === 0 ? l : " ".repeat(indent) + l));
}

/** Prose wrapped to `width`: paragraphs, separated by blank lines, each refilled. */
function prose(text: string, width: number): string[] {
  return text.trim().split(/\n\s*\n/).flatMap((paragraph, i) => [
    ...(i === 0 ? [] : [""]),
    ...fill(paragraph, width, 0),
  ]);
}

/** A two-column table (name, text), the text wrapped beside the names. */
function table(rows: [string, string][], width: number): string[] {
  const left = Math.min(Math.max(0, ...rows.map(([name]) => name.length)), 32);
  return rows.flatMap(([name, text]) => {
    const indent = 2 + left + 2;
    if (name.length > left) {
      // A long flag gets its own line; its text starts below it.
      return [
        `  ${name}`,
        ...fill(text, width, indent).map((l, i) => (i === 0 ? " ".repeat(indent) + l : l)),
      ];
    }
    const head = `  ${name.padEnd(left)}  `;
    const body = fill(text, width - indent, 0);
    return body.map((l, i) => (i === 0 ? head : " ".repeat(indent)) + l);
  });
}

function optionRows(options: Record<string, OptionSpec>): [string, string][] {
  return Object.entries(options).map(([name, o]) => [
    `${o.short ? `-${o.short}, ` : "    "}--${name}${o.value ? ` ${o.value}` : ""}`,
    o.help + (o.multiple ? " (repeatable)" : ""),
  ]);
}

// Aliases of the same length ("plugins rm"); a group word alone ("plugins") is told in the group's help.
function commandRows(entries: CommandEntry[]): [string, string][] {
  return entries.map((c) => {
    const words = c.name.split(" ").length;
    const aliases = (c.aliases ?? []).filter((a) => a.split(" ").length === words);
    const also = aliases.map((a) => a.split(" ").at(-1)).join(", ");
    return [c.name, c.summary + (aliases.length ? ` (also: ${also})` : "")];
  });
}

/** The exit codes as one sentence: the signals' codes together, as README words them. */
function exitCodes(): string {
  const signals = new Set<string>(INTERRUPTS);
  const others = Object.entries(EXIT).filter(([name]) => !signals.has(name));
  const interrupted = `${INTERRUPTS.map((s) => EXIT[s].code).join("/")} interrupted by ${
    INTERRUPTS.join("/")
  }`;
  return [...others.map(([, e]) => `${e.code} ${e.means}`), interrupted].join(", ");
}

/** `tyhooks --help`. */
export function topHelp(width: number): string {
  return [
    "Usage: tyhooks [global options] <command> [options]",
    "",
    ...prose(
      "Runs ty task-manager plugins and hooks outside ty: events, routing, placement, " +
        "tool-call guards, services.",
      width,
    ),
    "",
    "Commands:",
    ...table(commandRows(COMMANDS), width),
    "",
    "Global options (before or after the command):",
    ...table(optionRows(LINE_OPTIONS), width),
    "",
    ...prose(`Exit codes: ${exitCodes()}.`, width),
    "",
    ...prose(
      'Run "tyhooks help <command>" or "tyhooks <command> --help" for a command\'s options.',
      width,
    ),
    "",
    "Examples:",
    "  tyhooks plugins",
    '  tyhooks fire task.done --task-json \'{"id":42,"title":"Ship it"}\'',
    "  tyhooks help tool pre",
  ].join("\n") + "\n";
}

/** Help for a group of commands (`tyhooks plugins --help`), or undefined when `group` is none. */
export function groupHelp(group: string, width: number): string | undefined {
  const members = COMMANDS.filter((c) => c.name.startsWith(`${group} `));
  if (members.length === 0) return undefined;
  const alone = COMMANDS.find((c) => c.aliases?.includes(group));
  return [
    `Usage: tyhooks ${group} <command> [options]`,
    "",
    "Commands:",
    ...table(commandRows(members), width),
    "",
    ...(alone
      ? [...prose(`"tyhooks ${group}" alone runs "tyhooks ${alone.name}".`, width), ""]
      : []),
    ...prose(`Run "tyhooks help ${group} <command>" for a command's options.`, width),
    "",
    "Examples:",
    ...members.slice(0, 3).map((c) => `  ${c.examples[0]}`),
  ].join("\n") + "\n";
}

/** A command's `--help`: usage, what it does, its options and the global ones, examples. */
export function commandHelp(
  entry: CommandEntry,
  { spec, options, width }: {
    spec: CommandSpec;
    options: Record<string, OptionSpec>;
    width: number;
  },
): string {
  const own = Object.fromEntries(
    Object.entries(options).filter(([name]) => !Object.hasOwn(LINE_OPTIONS, name)),
  );
  const subcommands = COMMANDS.filter((c) => c.name.startsWith(`${entry.name} `));
  const lines = [
    `Usage: tyhooks ${entry.name}${spec.args ? ` ${spec.args}` : ""}${
      Object.keys(own).length ? " [options]" : ""
    }`,
    "",
    ...prose(spec.summary, width),
  ];
  const aliases = (entry.aliases ?? []).filter((a) => a !== entry.name);
  const also = aliases.map((a) => `tyhooks ${a}`).join(", ");
  if (aliases.length) lines.push("", ...prose(`Also: ${also}.`, width));
  if (subcommands.length) lines.push("", "Commands:", ...table(commandRows(subcommands), width));
  if (Object.keys(own).length) lines.push("", "Options:", ...table(optionRows(own), width));
  lines.push("", "Global options:", ...table(optionRows(LINE_OPTIONS), width));
  if (spec.details) lines.push("", ...prose(spec.details, width));
  lines.push("", "Examples:", ...entry.examples.map((e) => `  ${e}`));
  return lines.join("\n") + "\n";
}
