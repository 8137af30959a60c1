/**
 * Guards fail closed on load failures too (SPEC, "Trust boundaries"): a `pre_tool_call` hook that
 * could not be loaded is not "no hook configured". This finds, from the loader's warnings, a
 * guard the load lost: the plugins dir could not be read, or a plugin that declares
 * `pre_tool_call` (or whose unparseable manifest mentions it) was skipped or had that hook
 * dropped. Only warnings are looked at, so a clean load costs nothing.
 *
 * @module
 */

import { basename, dirname } from "node:path";
import type { PluginIndex } from "../plugins/types.ts";
import { readBounded } from "../read_bounded.ts";

/** The guard event. */
const GUARD = "pre_tool_call";

/**
 * Why the index may lack a guard it should have, or null when nothing was lost.
 *
 * Requires `--allow-read`.
 *
 * @param index The loaded plugins and their warnings.
 * @returns A reason naming the problem, or null.
 */
export function lostGuard(index: PluginIndex): Promise<string | null> {
  // Once per index: the daemon asks for every tool call over the same snapshot.
  let found = judged.get(index);
  if (found === undefined) {
    found = judge(index);
    judged.set(index, found);
  }
  return found;
}

const judged = new WeakMap<PluginIndex, Promise<string | null>>();

async function judge(index: PluginIndex): Promise<string | null> {
  const loadedGuards = new Set(
    index.plugins.filter((p) => Object.hasOwn(p.hooks, GUARD)).map((p) => p.dir),
  );
  const checked = new Set<string>();
  for (const warning of index.warnings) {
    // The loader's one warning about the plugins dir itself: it could not be listed.
    if (warning.plugin === null && warning.path === index.dir) {
      return `the plugins dir "${index.dir}" could not be read: ${warning.message}`;
    }
    if (basename(warning.path) !== "plugin.yaml") continue;
    const dir = dirname(warning.path);
    if (loadedGuards.has(dir) || checked.has(dir)) continue;
    checked.add(dir);
    const declares = await declaresGuard(warning.path);
    if (declares === false) continue;
    const why = declares === null ? "its manifest could not be read, so it may declare one" : "";
    return `a plugin in "${dir}" that declares ${GUARD} was not loaded with it: ${warning.message}${
      why ? ` (${why})` : ""
    }`;
  }
  return null;
}

/**
 * Whether the manifest at `path` declares a `pre_tool_call` hook; for one that cannot be parsed,
 * whether its text mentions it. Null when it cannot be read at all.
 */
async function declaresGuard(path: string): Promise<boolean | null> {
  const { readManifest } = await import("../plugins/read_manifest.ts");
  const read = await readManifest(path);
  if (read.ok) {
    const data = read.lenient;
    if (data === null || typeof data !== "object" || Array.isArray(data)) return false;
    const hooks = (data as Record<string, unknown>).hooks;
    return hooks !== null && typeof hooks === "object" && Object.hasOwn(hooks, GUARD);
  }
  try {
    return (await readBounded(path)).includes(GUARD);
  } catch {
    return null;
  }
}
