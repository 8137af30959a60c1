/**
 * Loads one plugin dir, forgivingly: reads the manifest, keeps every usable entry and records a
 * problem (with its line and column) for every one it drops. Whether the plugin as a whole is
 * skipped is decided here too; name clashes between plugins are decided by the caller.
 *
 * This module pulls in zod and yaml, so it is only ever imported dynamically.
 *
 * @module
 */

import { dirname, join, relative } from "../_path.ts";
import type { LoadWarning, Plugin } from "./types.ts";
import { type ParsedManifest, readManifest } from "./read_manifest.ts";
import { locate, type Position } from "./locate.ts";
import { quote, REASONS, skipped } from "./messages.ts";
import { isRecord } from "../_util.ts";
import { hasControlCharacters } from "./dir_name.ts";
import { buildPlugin, isUsable } from "./build_plugin.ts";
import { observe } from "./_observe.ts";
import { unsafeMode } from "./strict_modes.ts";

/** Everything learned about one plugin dir. */
export interface PluginReport {
  /** Absolute plugin dir. */
  dir: string;
  /** The dir relative to the plugins dir, for messages. */
  relDir: string;
  /** Absolute path of its `plugin.yaml`. */
  manifest: string;
  /** The plugin's name, when the manifest gives a usable one. */
  name: string | null;
  /** Where the name is written, for a duplicate-name warning. */
  nameAt: Position | null;
  /** The plugin, or null when it is skipped. */
  plugin: Plugin | null;
  /** One warning per dropped entry. */
  problems: LoadWarning[];
  /** The one warning of a skipped plugin, else null. */
  skip: LoadWarning | null;
  /** What only `plugins validate` reports (the loader accepts it, as ty does). */
  lint: LoadWarning[];
  /** The parsed manifest, for the strict lint; null when it could not be parsed. */
  parsed: ParsedManifest | null;
}

/**
 * Loads the plugin in `dir`. Never throws for anything a plugin contains. Requires
 * `--allow-read`.
 *
 * @param root The plugins dir (absolute), for relative names in messages.
 * @param dir The plugin dir (absolute), holding `plugin.yaml`.
 * @param options The abort signal, which ends the manifest's read.
 */
export async function inspectPlugin(
  root: string,
  dir: string,
  options: { signal?: AbortSignal } = {},
): Promise<PluginReport> {
  const manifest = join(dir, "plugin.yaml");
  const report: PluginReport = {
    dir,
    relDir: relative(root, dir) || ".",
    manifest,
    name: null,
    nameAt: null,
    plugin: null,
    problems: [],
    skip: null,
    lint: [],
    parsed: null,
  };
  const warning = (message: string, at: Position | null): LoadWarning => ({
    plugin: report.name,
    path: manifest,
    line: at?.line ?? null,
    column: at?.column ?? null,
    message,
  });
  const skip = (reason: string, at: Position | null) => {
    report.skip = warning(skipped(report.name, report.relDir, reason), at);
    return report;
  };

  const read = await readManifest(manifest, { signal: options.signal });
  if (!read.ok) return skip(read.message, read.at);
  report.parsed = read;
  const data = read.lenient;
  if (data === null || data === undefined) return skip(REASONS.empty, { line: 1, column: 1 });
  if (!isRecord(data)) return skip(REASONS.notAMap, locate(read, []));
  const nameAt = locate(read, ["name"]);
  const name = data.name;
  if (name === undefined || name === null || name === "") return skip(REASONS.noName, nameAt);
  if (typeof name !== "string") return skip(REASONS.nameNotText, nameAt);
  if (hasControlCharacters(name)) return skip(REASONS.nameControl, nameAt);
  report.name = name;
  report.nameAt = nameAt;

  let realDir: string;
  observe(dir);
  try {
    realDir = Deno.realPathSync(dir);
  } catch (error) {
    return skip(`cannot resolve the plugin dir: ${(error as Error).message}`, null);
  }
  const { parts, problems, notes } = buildPlugin({ dir, realDir }, data, read.typed);
  report.problems = problems.map((p) => warning(p.message, locate(read, p.at, { key: p.key })));
  // StrictModes: whoever can write the manifest, the plugin dir or a dir above it (up to the
  // plugins dir, where another plugin could be put in its place) decides what runs.
  const unsafeParts: string[] = [];
  const check = (what: string, path: string) => {
    let unsafe: ReturnType<typeof unsafeMode> = null;
    try {
      unsafe = unsafeMode(Deno.statSync(path), path);
    } catch {
      // Gone since it was resolved: nothing left to warn about.
    }
    if (unsafe !== null) unsafeParts.push(`${what} ${unsafe.reason} (hint: ${unsafe.hint})`);
  };
  check(`Plugin dir ${quote(report.relDir)}`, realDir);
  check(`Manifest ${quote(join(report.relDir, "plugin.yaml"))}`, join(realDir, "plugin.yaml"));
  for (let up = dirname(dir); up.length >= root.length && up !== dir; up = dirname(up)) {
    check(`Dir ${quote(relative(root, up) || root)} above plugin ${quote(report.relDir)}`, up);
    if (up === root || up === dirname(up)) break;
  }
  report.problems.unshift(...unsafeParts.map((message) => warning(message, null)));
  report.lint = notes.map((p) => warning(p.message, locate(read, p.at, { key: p.key })));
  if (!isUsable(parts)) {
    const drops = problems.flatMap((p) => p.dropped === undefined ? [] : [p.dropped]);
    return skip(REASONS.nothingUsable(drops), nameAt);
  }
  report.plugin = { name, ...parts };
  return report;
}
