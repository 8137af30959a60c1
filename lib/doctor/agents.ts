/**
 * `doctor`'s agent checks of each agent's user and project settings: tyhooks run by an absolute
 * path, and consulted events in the fail-closed form `agent install` writes, so the agent blocks
 * even when tyhooks cannot start.
 *
 * @module
 */

import { type Check, passed, problem } from "./check.ts";
import { AGENTS, type AgentSpec, pluginEvent } from "../agents/table.ts";
import {
  commandWords,
  isTyhooksCommand,
  malformedEntry,
  readSettingsText,
  settingsFile,
} from "../agents/install.ts";
import { eventSpec } from "../events.ts";
import { isRecord } from "../wire/json.ts";
import { quoted } from "../text.ts";
import { isAbsolute } from "../paths.ts";

/** One hook entry of a settings file that runs tyhooks. */
interface Entry {
  /** The agent's event name. */
  event: string;
  command: string;
  /** Cursor's `failClosed`. */
  failClosed: boolean;
}

/** The agent checks, one agent after another; `cwd` is the project looked at. */
export async function agentChecks(cwd: string): Promise<Check[]> {
  const checks: Check[] = [];
  for (const agent of AGENTS) {
    const files: { path: string; project: boolean }[] = [];
    try {
      files.push({ path: settingsFile(agent), project: false });
    } catch {
      // No home dir: only the project's file can be looked at.
    }
    files.push({ path: settingsFile(agent, cwd), project: true });
    const found = [];
    for (const file of files) {
      let read: Read;
      try {
        const text = await readSettingsText(file.path);
        if (text === null) continue;
        read = { text };
      } catch (error) {
        read = { error: (error as Error).message };
      }
      found.push({ ...file, read });
    }
    if (found.length === 0) {
      checks.push(passed(
        `agent ${agent.name}`,
        `${agent.title}: no settings file (${files.map((f) => quoted(f.path)).join(", ")}), ` +
          "so it runs no tyhooks hook",
      ));
    }
    for (const file of found) checks.push(...fileChecks(agent, file));
  }
  return checks;
}

/** A settings file's text, or why it cannot be read; null when there is none. */
type Read = { text: string } | { error: string };

function fileChecks(
  agent: AgentSpec,
  file: { path: string; project: boolean; read: Read },
): Check[] {
  const name = `agent ${agent.name}`;
  const install = `tyhooks agent install ${agent.name}${file.project ? " --project ." : ""}`;
  const where = quoted(file.path);
  if ("error" in file.read) {
    return [problem("fail", name, {
      detail: `${agent.title} settings ${where} cannot be read: ${file.read.error}`,
      fix: `ls -l ${where}, and make it a readable file`,
    })];
  }
  let settings: unknown;
  try {
    settings = JSON.parse(file.read.text);
  } catch (error) {
    return [problem("fail", name, {
      detail: `${agent.title} settings ${where} is not valid JSON (${(error as Error).message}), ` +
        "so the agent may ignore it whole",
      fix: `correct the JSON of ${where}`,
    })];
  }
  const entries = tyhooksEntries(settings, agent);
  if (entries === null) {
    return [problem("fail", name, {
      detail: `${agent.title} settings ${where}: "hooks" is not an object`,
      fix: `correct "hooks" in ${where}, then: ${install}`,
    })];
  }
  // The agent may skip the whole file (Claude Code does, saying so only when interactive).
  const malformed = isRecord(settings) && isRecord(settings.hooks)
    ? malformedEntry(settings.hooks, agent)
    : null;
  if (malformed !== null) {
    return [problem("fail", name, {
      detail: `${agent.title} settings ${where}: ${malformed}, so the agent may skip the whole ` +
        `file, ${entries.length === 0 ? "its hooks" : "tyhooks' hooks"} with it`,
      fix: `correct or remove that entry of ${where}`,
    })];
  }
  if (entries.length === 0) {
    return [passed(name, `${agent.title} settings ${where}: no tyhooks hook`)];
  }
  // Events grouped by what is wrong with their command, so one mistake is one line.
  const wrong = new Map<string, string[]>();
  for (const entry of entries) {
    for (const why of entryProblems(agent, entry)) {
      wrong.set(why, [...(wrong.get(why) ?? []), entry.event]);
    }
  }
  const events = [...new Set(entries.map((e) => e.event))];
  if (wrong.size === 0) {
    return [passed(
      name,
      `${agent.title} settings ${where}: ${events.join(", ")} run tyhooks by an absolute path, ` +
        "the consulted ones fail-closed",
    )];
  }
  return [...wrong].map(([why, bad]) =>
    problem("fail", name, {
      detail: `${agent.title} settings ${where}: ${[...new Set(bad)].join(", ")} ${why}`,
      fix: install,
    })
  );
}

// Every hook entry that runs tyhooks: Claude Code's format (`{"hooks": {EVENT: [{"matcher",
// "hooks": [{"command"}]}]}}`, Gemini CLI and Codex too) and Cursor's (`{EVENT: [{"command"}]}`).
// Null when "hooks" is there but not an object.
function tyhooksEntries(settings: unknown, agent: AgentSpec): Entry[] | null {
  if (!isRecord(settings) || settings.hooks === undefined) return [];
  if (!isRecord(settings.hooks)) return null;
  const entries: Entry[] = [];
  const take = (event: string, hook: unknown) => {
    if (!isRecord(hook) || !isTyhooksCommand(hook.command, agent)) return;
    entries.push({ event, command: hook.command as string, failClosed: hook.failClosed === true });
  };
  for (const [event, list] of Object.entries(settings.hooks)) {
    if (!Array.isArray(list)) continue;
    for (const item of list) {
      take(event, item);
      if (isRecord(item) && Array.isArray(item.hooks)) {
        for (const hook of item.hooks) take(event, hook);
      }
    }
  }
  return entries;
}

// What is wrong with one entry's command, each as the end of a sentence naming its events.
function entryProblems(agent: AgentSpec, entry: Entry): string[] {
  const problems: string[] = [];
  const words = commandWords(entry.command);
  const program = words[0] ?? "";
  if (!isAbsolute(program)) {
    problems.push(
      `run tyhooks as ${quoted(program)}, not by an absolute path: the agent's PATH decides ` +
        "what runs, and if it finds nothing the call goes through unguarded",
    );
  } else {
    // The program, and the entry file a source install runs (`deno run ... /abs/main.ts`).
    const files = words.filter((w, i) => i === 0 || (isAbsolute(w) && /\.[jt]s$/.test(w)));
    for (const path of files) {
      const why = notRunnable(path, path === program);
      if (why !== null) problems.push(`run tyhooks as ${quoted(path)}, which ${why}`);
    }
  }
  const consulted = eventSpec(pluginEvent(agent, entry.event)).kind === "consulted";
  // The agent blocks when tyhooks does not answer if the command ends in `|| ... exit 2` (every
  // agent reads exit 2 as a block), or with Cursor's `failClosed`.
  const failsClosed = entry.failClosed || /\|\|[^]*\bexit\s+2\b/.test(entry.command);
  if (consulted && !failsClosed) {
    problems.push(
      "are not in the fail-closed form: when tyhooks cannot start, is killed or exits 1, the " +
        "agent lets the call through",
    );
  }
  return problems;
}

function notRunnable(path: string, program: boolean): string | null {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(path);
  } catch {
    return "does not exist";
  }
  if (!info.isFile) return "is not a file";
  if (program && info.mode !== null && (info.mode & 0o111) === 0) return "is not executable";
  return null;
}
