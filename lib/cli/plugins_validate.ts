import { type CommandContext, type CommandSpec, UsageError } from "./types.ts";
import { basename, dirname, hooksDir, pluginsDir, resolve } from "../paths.ts";
import { validatePluginDir, validatePlugins } from "../plugins/validate.ts";
import { readLegacyHooks, warningJson } from "../plugins/listing.ts";
import type { LoadWarning } from "../plugins/types.ts";
import { escapeControl, jsonText, quoted } from "../text.ts";

export const spec: CommandSpec = {
  summary: "Lint plugins strictly (the plugins dir, or each PATH); exit 1 on any problem.",
  args: "[path...]",
  positionals: [0, Infinity],
  options: {
    json: { type: "boolean", help: 'print {"ok","problems"} as JSON on stdout' },
  },
  details: [
    "Without PATH: every plugin of the plugins dir, and the legacy hooks dir. Each PATH is a",
    "plugin dir, a collection, or a plugin.yaml (a plugin's own repository in CI). Each problem",
    "is printed on stdout as FILE:LINE:COL: message: invalid YAML, a missing name, a duplicate",
    "name, unknown keys (a typo such as hook: for hooks:), wrong types, every hook, action or",
    "service that loading would drop, a script that would not start (no #! line, or one ending",
    "in CR), and a PATH holding no plugin. A PATH that does not exist is a usage error (64).",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const problems: LoadWarning[] = [];
  const oks: string[] = [];
  const count = (n: number) => `${n} ${n === 1 ? "plugin" : "plugins"}`;
  const problem = (path: string, message: string) =>
    problems.push({ plugin: null, path, line: null, column: null, message });
  if (ctx.positionals.length === 0) {
    const dir = pluginsDir(ctx.globals.pluginsDir);
    const result = await validatePlugins(dir);
    problems.push(
      ...result.problems,
      ...(await readLegacyHooks(hooksDir(ctx.globals.hooksDir))).problems,
    );
    // A plugin's own dir given as the plugins dir would lint nothing and pass: the plugins dir is
    // searched below itself, so its own plugin.yaml is never read (as in ty).
    if (await Deno.lstat(resolve(dir, "plugin.yaml")).catch(() => null) !== null) {
      problem(
        dir,
        `The plugins dir ${quoted(dir)} is itself a plugin, which is not loaded from there ` +
          `(hint: tyhooks plugins validate ${quoted(dir)})`,
      );
    }
    // A missing plugins dir holds no plugins (SPEC), but say so: it may be a typo.
    const missing = await Deno.stat(dir).then(() => "", () => " (it does not exist)");
    oks.push(`ok: ${count(result.checked)} in ${quoted(dir)}${missing}`);
  } else {
    // Every PATH is checked to exist first: a typo must not pass as "nothing to lint".
    const targets = await Promise.all(ctx.positionals.map(target));
    for (const { path, kind } of targets) {
      const result = kind === "plugin"
        ? await validatePluginDir(path)
        : await validatePlugins(path);
      problems.push(...result.problems);
      if (result.checked === 0) {
        problem(path, `No plugin found in ${quoted(path)}: no plugin.yaml in it or below it`);
      }
      oks.push(`ok: ${count(result.checked)} in ${quoted(path)}`);
    }
  }
  const ok = problems.length === 0;
  if (ctx.values.json) {
    await ctx.print(jsonText({ ok, problems: problems.map(warningJson) }, 2));
  } else if (ok) {
    await ctx.print(oks.join("\n") + "\n");
  } else {
    await ctx.print(
      problems.map((p) =>
        // A problem of the whole file (too large, not UTF-8) is reported at 1:1. One line each,
        // whatever a dir name holds (a newline, an escape sequence).
        `${escapeControl(p.path)}:${p.line ?? 1}:${p.column ?? 1}: ${escapeControl(p.message)}\n`
      ).join(""),
    );
  }
  return ok ? 0 : 1;
}

async function target(given: string): Promise<{ path: string; kind: "plugin" | "collection" }> {
  const path = resolve(given);
  const info = await Deno.stat(path).catch(() => null);
  if (info === null) {
    throw new UsageError(
      `Path ${quoted(given)} does not exist`,
      "hint: give a plugin dir, a collection, or a plugin.yaml",
    );
  }
  // A FIFO or a device named plugin.yaml is its plugin's problem, told as the plugin's.
  if (!info.isDirectory) {
    if (basename(path) !== "plugin.yaml") {
      throw new UsageError(
        `Path ${quoted(given)} is not a plugin.yaml`,
        "hint: give a plugin dir, a collection, or a plugin.yaml",
      );
    }
    return { path: dirname(path), kind: "plugin" };
  }
  const manifest = await Deno.lstat(resolve(path, "plugin.yaml")).catch(() => null);
  return { path, kind: manifest !== null ? "plugin" : "collection" };
}
