/**
 * `tyhooks agent install AGENT` and `agent uninstall AGENT`: tyhooks wired into a coding agent's
 * hook settings, or taken out of them.
 *
 * @module
 */

import {
  type CommandContext,
  type CommandModule,
  type OptionSpec,
  stringOption,
  UsageError,
} from "./types.ts";
import { AGENTS } from "../agents/table.ts";
import { knownAgent } from "./agent.ts";
import { applyChange, planInstall, planUninstall, type SettingsChange } from "../agents/install.ts";
import { hooksDir, pluginsDir, resolve } from "../paths.ts";
import { quoted } from "../text.ts";

const AGENT_NAMES = AGENTS.map((agent) => agent.name);

const OPTIONS: Record<string, OptionSpec> = {
  project: {
    type: "string",
    value: "DIR",
    help: "change the settings of the project in DIR, not the user's",
  },
  "dry-run": { type: "boolean", help: "print the resulting file and write nothing" },
};

export const install: CommandModule = {
  spec: {
    summary: "Wire tyhooks into a coding agent's hook settings, for every event it has.",
    args: "<agent>",
    positionals: [1, 1],
    options: OPTIONS,
    details: [
      `AGENT: ${AGENT_NAMES.join(", ")}. The settings: ${
        AGENTS.map((a) => `${a.title} ${a.userSettings} (project: DIR/${a.projectSettings})`)
          .join("; ")
      }.`,
      "",
      "Each of the agent's hook events gets one entry that runs `tyhooks agent AGENT` by absolute",
      "path, with a 30 s timeout; tool events match every tool. For the events the agent waits",
      "on (tool calls, prompts, stops) the command blocks whenever tyhooks does not answer",
      "itself (moved, deleted, crashed, killed), and tyhooks gets --deadline 25s so it answers",
      "first. The file is merged: other settings and hooks stay, an earlier tyhooks entry is",
      "replaced, the old file is kept as FILE.bak. A file that is not valid JSON is left as it is.",
      "--plugins-dir and $TY_PLUGINS_DIR, when given, are written into each command.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const agent = knownAgent(ctx.positionals[0]);
    const plan = await planInstall(agent, { project: projectDir(ctx), flags: dirFlags(ctx) });
    if (ctx.values["dry-run"]) {
      await ctx.print(plan.text);
      return 0;
    }
    const what = `${plan.entries} tyhooks entries for ${agent.title}`;
    if (!plan.changed) {
      await ctx.print(`Nothing to change in ${quoted(plan.file)}: it has the ${what}\n`);
    } else {
      const backup = await applyChange(plan);
      const replaced = plan.replaced > 0 ? `, replacing ${plan.replaced} earlier ones` : "";
      await ctx.print(`Wrote ${quoted(plan.file)}: ${what}${replaced}${backupNote(backup)}\n`);
    }
    if (agent.name === "codex") {
      await ctx.print(codexTrust(plan, projectDir(ctx)));
    }
    return 0;
  },
};

export const uninstall: CommandModule = {
  spec: {
    summary: "Take tyhooks' entries out of a coding agent's hook settings, and nothing else.",
    args: "<agent>",
    positionals: [1, 1],
    options: OPTIONS,
    details: [
      `AGENT: ${AGENT_NAMES.join(", ")}. An entry is tyhooks' when its command runs`,
      "`tyhooks ... agent AGENT` (or the older `tyhooks tool pre|post --claude`); an event or a",
      "hooks object left empty by its removal goes too.",
      "The old file is kept as FILE.bak.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const agent = knownAgent(ctx.positionals[0]);
    const plan = await planUninstall(agent, { project: projectDir(ctx) });
    if (ctx.values["dry-run"]) {
      await ctx.print(plan.text);
      return 0;
    }
    if (!plan.changed) {
      await ctx.print(`Nothing to remove: ${quoted(plan.file)} has no tyhooks entry\n`);
      return 0;
    }
    const backup = await applyChange(plan);
    await ctx.print(
      `Wrote ${quoted(plan.file)}: removed ${plan.entries} tyhooks entries${backupNote(backup)}\n`,
    );
    return 0;
  },
};

/** `--project DIR`, which must be a dir: a typo must not become a new project. */
function projectDir(ctx: CommandContext): string | undefined {
  const dir = stringOption(ctx.values, "project");
  if (dir === undefined) return undefined;
  let isDir = false;
  try {
    isDir = Deno.statSync(dir).isDirectory;
  } catch {
    // Missing or unreadable: the same answer.
  }
  if (!isDir) throw new UsageError(`No such project dir ${quoted(dir)} for flag "--project"`);
  return dir;
}

/** The dirs the line or the environment chose, for the hooks to use the same ones. */
function dirFlags(ctx: CommandContext): string[] {
  const flags: string[] = [];
  if (ctx.globals.pluginsDir !== undefined || Deno.env.get("TY_PLUGINS_DIR")) {
    flags.push("--plugins-dir", pluginsDir(ctx.globals.pluginsDir));
  }
  if (ctx.globals.hooksDir !== undefined) flags.push("--hooks-dir", hooksDir(ctx.globals.hooksDir));
  return flags;
}

function backupNote(backup: string | null): string {
  return backup === null ? "" : ` (the old file is ${quoted(backup)})`;
}

/** What a person does before Codex runs the hooks: tyhooks never trusts them on their behalf. */
function codexTrust(plan: SettingsChange, project: string | undefined): string {
  const lines = [
    "Codex runs these hooks only once you trust them, and tyhooks does not do that for you: in",
    "codex, /hooks lists them to review and trust (a hook that changes must be trusted again);",
    "without a terminal, `codex app-server` lists them (hooks/list) and each trusted hash goes in",
    '$CODEX_HOME/config.toml as [hooks.state."KEY"] trusted_hash. Codex versions that have hooks',
    "off by default also need [features] hooks = true there.",
  ];
  if (project !== undefined) {
    lines.push(
      `Codex reads ${quoted(plan.file)} only in a trusted project:`,
      `[projects.${quoted(resolve(project))}] trust_level = "trusted".`,
    );
  }
  return lines.join("\n") + "\n";
}
