/**
 * Guards fail closed on load failures too (SPEC, "Trust boundaries"): a `pre_tool_call` hook that
 * could not be loaded is not "no hook configured". This finds, from the loader's warnings, a
 * guard the load lost: the plugins dir could not be read, or a plugin that declares
 * `pre_tool_call` (or whose unparseable manifest mentions it) was skipped or had that hook
 * dropped. Only warnings are looked at, so a clean load costs nothing.
 *
 * @module
 */

import { basename, dirname } from "../_path.ts";
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

// Plugin dirs seen with a guard by this process. A daemon reloading while a manifest is half
// written may read a prefix that parses and names no hook at all: the plugin had a guard a moment
// ago, so its warning still means a lost guard.
const guardedBefore = new Set<string>();

async function judge(index: PluginIndex): Promise<string | null> {
  const loadedGuards = new Set(
    index.plugins.filter((p) => Object.hasOwn(p.hooks, GUARD)).map((p) => p.dir),
  );
  for (const dir of loadedGuards) guardedBefore.add(dir);
  if (index.warnings.length === 0) return null;
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
    const read = await readGuard(warning.path);
    // A manifest without a readable hooks map, in a dir that had a guard: most likely cut while
    // being written (a daemon reload), so the guard is lost, not removed.
    const broken = read === "no hooks map" && guardedBefore.has(dir);
    if (read === "no" || (read === "no hooks map" && !broken)) continue;
    const why = read === "unreadable"
      ? " (its manifest could not be read, so it may declare one)"
      : broken
      ? " (it had that hook when last loaded)"
      : "";
    return `a plugin in "${dir}" that declares ${GUARD} was not loaded with it: ${warning.message}${why}`;
  }
  return null;
}

/**
 * Whether the manifest at `path` declares a `pre_tool_call` hook ("yes", "no", or "no hooks map"
 * when it parses but `hooks` is missing or not a map); for one that cannot be parsed, whether its
 * text mentions the event. "unreadable" when it cannot be read at all.
 */
async function readGuard(path: string): Promise<"yes" | "no" | "no hooks map" | "unreadable"> {
  const { readManifest } = await import("../plugins/read_manifest.ts");
  const read = await readManifest(path);
  if (read.ok) {
    const data = read.lenient;
    const hooks = isMap(data) ? data.hooks : undefined;
    if (!isMap(hooks)) return "no hooks map";
    return Object.hasOwn(hooks, GUARD) ? "yes" : "no";
  }
  try {
    return (await readBounded(path)).includes(GUARD) ? "yes" : "no";
  } catch {
    return "unreadable";
  }
}

function isMap(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === "object" && !Array.isArray(value);
}
