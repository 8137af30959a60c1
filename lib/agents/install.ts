/**
 * Wiring tyhooks into a coding agent's hook settings (`tyhooks agent install|uninstall`; README,
 * "Coding agents"). A consulted event's command blocks whenever tyhooks does not answer itself:
 * the agents let a call through when a hook cannot start or crashes, but all of them block on
 * exit 2 with a reason on stderr, which the shell's `||` gives them. The merge changes only
 * tyhooks' own entries; a file not laid out as the agent reads it is an error, left as it is.
 *
 * @module
 */

import { type AgentSpec, pluginEvent } from "./table.ts";
import { DEFAULT_TIMEOUTS, eventSpec } from "../events.ts";
import { selfCommand } from "../process/detach.ts";
import { splitWords } from "../hosts/ssh.ts";
import { basename, dirname, home, join, resolve } from "../paths.ts";
import { modeText, readBounded, writeAtomic } from "../fs.ts";
import { RunError } from "../errors.ts";
import { kindOf, quoted } from "../text.ts";
import { isRecord } from "../wire/json.ts";

/** How long the agent gives each hook: the hooks' own bound. */
const AGENT_TIMEOUT_MS = DEFAULT_TIMEOUTS.tool;
/** tyhooks' deadline, safely below the agent's: it answers, blocking on its own failure, first. */
const DEADLINE = "25s";
/** What stands after a consulted event's command: the agent's block when tyhooks itself failed. */
const FAIL_CLOSED = ` || { code=$?; [ "$code" = 2 ] || ` +
  `echo "tyhooks did not answer (exit $code): blocking" >&2; exit 2; }`;

/** Where tyhooks is wired in, and with what. */
export interface WiringOptions {
  /** The project dir whose settings to change; default the user's settings. */
  project?: string;
  /** The command that runs this tyhooks; default {@linkcode tyhooksCommand}'s. */
  tyhooks?: readonly string[];
  /** Global flags every entry passes (`--plugins-dir DIR`). */
  flags?: readonly string[];
}

/** The settings file as it would be after the change, and what changed. */
export interface SettingsChange {
  /** The settings file (as named: a symlink is written through). */
  file: string;
  /** Whether the file exists now. */
  existed: boolean;
  /** The file's text after the change. */
  text: string;
  /** Whether `text` differs from the file's current content. */
  changed: boolean;
  /** tyhooks entries written (install) or removed (uninstall). */
  entries: number;
  /** Earlier tyhooks entries that the new ones replace (install). */
  replaced: number;
}

/**
 * The words that run this tyhooks again: the compiled binary, the launcher that started it, or
 * `deno run` with the binary's grants and V8 flags and the entry file, each by absolute path.
 */
export function tyhooksCommand(): string[] {
  const words = selfCommand();
  // The entry file by path, as a person reads it and `doctor` checks it exists.
  return words.map((word) =>
    word.startsWith("file:") ? decodeURIComponent(new URL(word).pathname) : word
  );
}

/**
 * The agent's hook settings file: the project's (relative to `project`) or the user's
 * (`~` the home dir, `${VAR:-DEFAULT}` an environment variable).
 */
export function settingsFile(agent: AgentSpec, project?: string): string {
  if (project !== undefined) return join(resolve(project), agent.projectSettings);
  const path = agent.userSettings.replace(
    /^\$\{(\w+):-([^}]*)\}/,
    (_, name: string, fallback: string) => Deno.env.get(name) || fallback,
  );
  if (path === "~" || path.startsWith("~/")) return join(home(), path.slice(1));
  return resolve(path);
}

/** The hook command of `event` under `agent`: fail-closed for a consulted event. */
export function hookCommand(agent: AgentSpec, event: string, options: WiringOptions = {}): string {
  const words = [
    ...(options.tyhooks ?? tyhooksCommand()),
    ...(options.flags ?? []),
    "agent",
    agent.name,
  ];
  if (!consulted(agent, event)) return words.map(shellWord).join(" ");
  return [...words, "--deadline", DEADLINE].map(shellWord).join(" ") + FAIL_CLOSED;
}

function consulted(agent: AgentSpec, event: string): boolean {
  return eventSpec(pluginEvent(agent, event)).kind === "consulted";
}

/** `word` as sh reads it back unchanged: bare when it holds nothing sh would interpret. */
export function shellWord(word: string): string {
  if (/^[\w@%+=:,./-]+$/.test(word)) return word;
  return `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * Whether `command` runs tyhooks (a program named `tyhooks`, or Deno on a tyhooks entry file) as
 * `agent NAME` or as the hand-written `tool pre|post --claude`: an install replaces both, so no
 * call is judged twice.
 */
export function isTyhooksCommand(command: unknown, agent: AgentSpec): boolean {
  if (typeof command !== "string") return false;
  const words = commandWords(command);
  const agentAt = words.findIndex((word, i) =>
    (word === "agent" && words[i + 1] === agent.name) ||
    (word === "tool" && ["pre", "post"].includes(words[i + 1]) && words.includes("--claude"))
  );
  if (agentAt < 1) return false;
  const program = basename(words[0]);
  if (program === "tyhooks") return true;
  return program === "deno" &&
    words.slice(1, agentAt).some((word) => /\/main\.[jt]s$/.test(word));
}

/**
 * The words of a hook command before its fail-closed tail (whichever tail an earlier version
 * wrote), as sh splits them. One with shell syntax a word split does not perform (a hand-written
 * `$HOME/bin/tyhooks agent claude`) is split at white space: enough to tell that it runs tyhooks.
 */
export function commandWords(command: string): string[] {
  const at = command.indexOf(" || ");
  const head = at === -1 ? command : command.slice(0, at);
  try {
    return splitWords(head, "hook command");
  } catch {
    return head.trim().split(/\s+/);
  }
}

/** The change `agent install` makes: tyhooks' entries for every event of the agent, in place. */
export async function planInstall(
  agent: AgentSpec,
  options: WiringOptions = {},
): Promise<SettingsChange> {
  const file = settingsFile(agent, options.project);
  const current = await readSettings(file, agent);
  const hooks = hooksOf(current.settings, file, agent);
  // Claude Code skips a settings file holding one malformed hook entry, the guards written here
  // with it, and says so only in an interactive session: an install there would guard nothing.
  const malformed = malformedEntry(hooks, agent);
  if (malformed !== null) {
    throw new RunError(`Cannot change ${quoted(file)}: ${malformed}`, {
      hint: `hint: correct or remove it, then run agent install again; ${agent.title} ` +
        "may skip the whole file while it is there",
    });
  }
  let replaced = 0;
  for (const event of Object.keys(agent.events)) {
    const list = eventList(hooks, event, file);
    const { kept, removed, at } = withoutTyhooks(list, agent);
    replaced += removed;
    kept.splice(at ?? kept.length, 0, entry(agent, event, options));
    hooks[event] = kept;
  }
  const settings = agent.settingsFormat === "cursor"
    ? { version: 1, ...current.settings, hooks }
    : { ...current.settings, hooks };
  return change(file, current, settings, { entries: Object.keys(agent.events).length, replaced });
}

/** The change `agent uninstall` makes: exactly tyhooks' entries out, and what they leave empty. */
export async function planUninstall(
  agent: AgentSpec,
  options: { project?: string } = {},
): Promise<SettingsChange> {
  const file = settingsFile(agent, options.project);
  const current = await readSettings(file, agent);
  if (current.settings.hooks === undefined) return unchanged(file, current);
  const hooks = hooksOf(current.settings, file, agent);
  let entries = 0;
  for (const [event, value] of Object.entries(hooks)) {
    // Only lists hold entries: anything else is not tyhooks' to judge.
    if (!Array.isArray(value)) continue;
    const { kept, removed } = withoutTyhooks(value, agent);
    if (removed === 0) continue;
    entries += removed;
    if (kept.length === 0) delete hooks[event];
    else hooks[event] = kept;
  }
  if (entries === 0) return unchanged(file, current);
  const settings: Settings = { ...current.settings, hooks };
  if (Object.keys(hooks).length === 0) delete settings.hooks;
  return change(file, current, settings, { entries, replaced: 0 });
}

/**
 * Writes a planned change atomically with the old file's mode (new: 0644), through a symlink;
 * the old file saved as `FILE.bak`, whose path it returns (null when there was none).
 */
export async function applyChange(plan: SettingsChange): Promise<string | null> {
  const target = plan.existed ? await Deno.realPath(plan.file) : plan.file;
  let mode = 0o644;
  let backup: string | null = null;
  if (plan.existed) {
    const info = await Deno.stat(target);
    mode = (info.mode ?? 0o644) & 0o777;
    // A rename would replace it whatever its mode says: its owner made it read-only on purpose.
    if ((mode & 0o200) === 0) {
      throw new RunError(
        `Cannot change ${quoted(plan.file)}: it is read-only (mode ${modeText(mode)})`,
        {
          hint: `hint: chmod u+w ${quoted(target)} to let tyhooks change it`,
        },
      );
    }
    backup = `${plan.file}.bak`;
    await writeAtomic(backup, await Deno.readTextFile(target), { mode });
    await Deno.chmod(backup, mode);
  } else {
    await Deno.mkdir(dirname(target), { recursive: true });
  }
  await writeAtomic(target, plan.text, { mode });
  // A file is created with the umask's narrowing: the old mode is kept exactly.
  await Deno.chmod(target, mode);
  return backup;
}

type Settings = Record<string, unknown>;

interface Current {
  settings: Settings;
  existed: boolean;
  text: string;
}

/** A settings file's text (at most 4 MiB: settings files are small), or null when there is none. */
export async function readSettingsText(path: string): Promise<string | null> {
  try {
    return await readBounded(path, { maxBytes: 4 * 1024 * 1024 });
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    throw error;
  }
}

async function readSettings(file: string, agent: AgentSpec): Promise<Current> {
  let text: string | null;
  try {
    text = await readSettingsText(file);
  } catch (error) {
    throw new RunError(`Cannot read ${quoted(file)}: ${(error as Error).message}`);
  }
  if (text === null) return { settings: {}, existed: false, text: "" };
  if (text.trim() === "") return { settings: {}, existed: true, text };
  let settings: unknown;
  try {
    settings = JSON.parse(text);
  } catch (error) {
    throw new RunError(
      `Cannot change ${quoted(file)}: it is not valid JSON: ${(error as Error).message}`,
      {
        hint: agent.settingsComments
          ? `hint: ${agent.title} allows comments, which a rewrite cannot keep: remove them, or ` +
            "write tyhooks' entries in by hand (README, Coding agents)"
          : `hint: fix it or move it away; ${agent.title} cannot read it either`,
      },
    );
  }
  if (!isRecord(settings)) {
    throw new RunError(
      `Cannot change ${quoted(file)}: its content must be a JSON object, not ${kindOf(settings)}`,
    );
  }
  return { settings, existed: true, text };
}

function hooksOf(settings: Settings, file: string, agent: AgentSpec): Settings {
  const hooks = settings.hooks ?? {};
  if (!isRecord(hooks)) {
    throw new RunError(
      `Cannot change ${quoted(file)}: "hooks" must be an object of event to hooks, not ${
        kindOf(hooks)
      }`,
      { hint: `hint: ${agent.title} reads it as one; fix it or move the file away` },
    );
  }
  return { ...hooks };
}

/**
 * The first entry under `hooks` that is not a hook in the agent's format, worded (`"hooks.Stop[0]"
 * has no "hooks" list`); null when every entry is one. Claude's format, which Gemini CLI and Codex
 * share: `EVENT: [{"matcher"?: string, "hooks": [{"type": string, "command"?: string}]}]`;
 * Cursor's: `EVENT: [{"command": string}]`.
 */
export function malformedEntry(hooks: Settings, agent: AgentSpec): string | null {
  for (const [event, list] of Object.entries(hooks)) {
    const at = `"hooks.${event}"`;
    if (!Array.isArray(list)) return `${at} is ${kindOf(list)}, not a list`;
    for (const [i, item] of list.entries()) {
      const why = agent.settingsFormat === "cursor" ? notCursorHook(item) : notHookGroup(item);
      if (why !== null) return `"hooks.${event}[${i}]" ${why}`;
    }
  }
  return null;
}

function notHookGroup(group: unknown): string | null {
  if (!isRecord(group)) return `is ${kindOf(group)}, not a map with a "hooks" list`;
  if (group.matcher !== undefined && typeof group.matcher !== "string") {
    return `has a "matcher" that is ${kindOf(group.matcher)}, not a string`;
  }
  if (!Array.isArray(group.hooks)) return 'has no "hooks" list';
  for (const [i, hook] of group.hooks.entries()) {
    if (!isRecord(hook) || typeof hook.type !== "string") {
      return `has a hook (${i}) that is not a map with a "type"`;
    }
    if (hook.type === "command" && typeof hook.command !== "string") {
      return `has a command hook (${i}) without a "command" string`;
    }
  }
  return null;
}

function notCursorHook(hook: unknown): string | null {
  return isRecord(hook) && typeof hook.command === "string"
    ? null
    : `is ${kindOf(hook)}, not a map with a "command" string`;
}

function eventList(hooks: Settings, event: string, file: string): unknown[] {
  const list = hooks[event] ?? [];
  if (!Array.isArray(list)) {
    throw new RunError(
      `Cannot change ${quoted(file)}: "hooks.${event}" must be a list, not ${kindOf(list)}`,
    );
  }
  return list;
}

/**
 * `list` without tyhooks' entries: a Claude-format group loses its tyhooks hooks (and goes when
 * nothing else is left in it); a Cursor entry is one hook. `at`: where the first removed group was.
 */
function withoutTyhooks(
  list: readonly unknown[],
  agent: AgentSpec,
): { kept: unknown[]; removed: number; at?: number } {
  const kept: unknown[] = [];
  let removed = 0;
  let at: number | undefined;
  for (const item of list) {
    // A Cursor entry is a group of its one hook: all of it goes, or none.
    const inner = agent.settingsFormat === "cursor" ? [item] : (item as { hooks?: unknown })?.hooks;
    if (!Array.isArray(inner)) {
      kept.push(item);
      continue;
    }
    const others = inner.filter((hook) => !isTyhooksCommand(commandOf(hook), agent));
    if (others.length === inner.length) {
      kept.push(item);
      continue;
    }
    removed += inner.length - others.length;
    if (others.length > 0) kept.push({ ...item as Settings, hooks: others });
    else at ??= kept.length;
  }
  return { kept, removed, at };
}

function commandOf(hook: unknown): unknown {
  return isRecord(hook) ? hook.command : undefined;
}

/** The entry for `event`, in the agent's format. */
function entry(agent: AgentSpec, event: string, options: WiringOptions): Settings {
  const command = hookCommand(agent, event, options);
  const timeout = agent.timeoutUnit === "ms" ? AGENT_TIMEOUT_MS : AGENT_TIMEOUT_MS / 1000;
  if (agent.settingsFormat === "cursor") {
    // Cursor lets an action through when a hook fails, unless told to fail closed.
    return consulted(agent, event) ? { command, timeout, failClosed: true } : { command, timeout };
  }
  const hook = { type: "command", command, timeout };
  const tools = eventSpec(pluginEvent(agent, event)).tools === true;
  return agent.matchers && tools ? { matcher: "*", hooks: [hook] } : { hooks: [hook] };
}

function unchanged(file: string, current: Current): SettingsChange {
  const { existed, text } = current;
  return { file, existed, text, changed: false, entries: 0, replaced: 0 };
}

function change(
  file: string,
  current: Current,
  settings: Settings,
  counts: { entries: number; replaced: number },
): SettingsChange {
  let text: string;
  try {
    text = JSON.stringify(settings, null, 2) + "\n";
  } catch (error) {
    // JSON.parse read it; writing it back recurses, and V8's stack ends first.
    throw new RunError(
      `Cannot change ${quoted(file)}: it is nested too deeply to write back ` +
        `(${(error as Error).message})`,
      { hint: "hint: fix it or move it away" },
    );
  }
  const same = current.existed && text === current.text;
  return { file, existed: current.existed, text, changed: !same, ...counts };
}
