import type { CommandContext, CommandSpec } from "./types.ts";
import { hooksDir, relative } from "../paths.ts";
import { loadIndexQuietly } from "./runner.ts";
import type { Plugin } from "../plugins/types.ts";
import { logWarnings } from "../plugins/messages.ts";
import { type LegacyHooks, pluginListJson, readLegacyHooks } from "../plugins/listing.ts";
import { isInside } from "../plugins/script_path.ts";
import { escapeControl, jsonText, quoted } from "../text.ts";
import { nothingListed } from "./table.ts";

export const spec: CommandSpec = {
  summary: "List the plugins, what each provides and how to use it, the legacy hooks, and the " +
    "warnings of loading them.",
  options: {
    json: { type: "boolean", help: "print the listing as JSON (warnings included) on stdout" },
  },
  details: [
    "For each plugin: its description, each hook -> script, each action with the command that runs",
    "it, its services, workflows and routines. Then the legacy hooks dir. Warnings (skipped",
    "plugins, dropped entries, legacy hooks that will not run) go to stderr, or into the JSON.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const [index, legacy] = await Promise.all([
    loadIndexQuietly(ctx),
    readLegacyHooks(hooksDir(ctx.globals.hooksDir)),
  ]);
  const warnings = [...index.warnings, ...legacy.problems];
  if (ctx.values.json) {
    const doc = pluginListJson({ ...index, warnings });
    await ctx.print(jsonText(doc, 2));
    return 0;
  }
  const parts = [];
  if (index.plugins.length === 0) {
    nothingListed(ctx.log, "plugins", {
      where: index.dir,
      hint: 'add one with "tyhooks plugins add SOURCE" or "tyhooks plugins new NAME"',
    });
  } else {
    parts.push(`Plugins in ${quoted(index.dir)}:\n\n${index.plugins.map(describe).join("\n")}`);
  }
  if (legacy.hooks.length > 0) parts.push(legacyBlock(legacy));
  if (parts.length > 0) await ctx.print(parts.join("\n"));
  logWarnings(ctx.log, warnings);
  return 0;
}

/**
 * One plugin, as ty lists it: what it provides and how each part is used. Every name, path and
 * command is shown with its control characters escaped, as the log shows them.
 */
function describe(p: Plugin): string {
  const lines = [`  ${escapeControl(`${p.name} (${p.version || "-"})`)}`];
  if (p.description) lines.push(`    ${escapeControl(p.description)}`);
  const rows: [string, string, string, string][] = [];
  const script = (path: string) => isInside(p.dir, path) ? relative(p.dir, path) : path;
  for (const event of Object.keys(p.hooks).sort()) {
    rows.push(["hook", event, `-> ${script(p.hooks[event])}`, ""]);
  }
  for (const a of p.actions) {
    const label = a.label === a.id ? a.id : `${a.id} "${a.label}"`;
    rows.push([
      "action",
      label,
      `-> ${script(a.command)}`,
      `run: tyhooks plugins run ${p.name} ${a.id}`,
    ]);
  }
  for (const s of p.services) {
    rows.push(["service", s.name, `-> ${s.command}`, "run: tyhooks services run"]);
  }
  for (const w of p.workflows) rows.push(["workflow", w, "", ""]);
  for (const r of p.routines) rows.push(["routine", r, "", ""]);
  const safe = rows.map((row) => row.map(escapeControl));
  const widths = [0, 1, 2].map((i) => Math.max(0, ...safe.map((r) => r[i].length)));
  for (const r of safe) {
    const padded = r.slice(0, 3).map((cell, i) => cell.padEnd(widths[i]));
    lines.push(`    ${[...padded, r[3]].join("  ")}`.trimEnd());
  }
  return lines.join("\n") + "\n";
}

function legacyBlock(legacy: LegacyHooks): string {
  const hooks = legacy.hooks.map((h) => ({ ...h, event: escapeControl(h.event) }));
  const width = Math.max(...hooks.map((h) => h.event.length));
  const lines = hooks.map((h) =>
    `  ${h.event.padEnd(width)}  ${h.runnable ? "" : "(not runnable) "}-> ${escapeControl(h.path)}`
  );
  return `Legacy hooks in ${quoted(legacy.dir)}:\n\n${lines.join("\n")}\n`;
}
