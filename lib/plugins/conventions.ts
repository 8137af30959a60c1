/**
 * What a plugin holds by convention rather than in its manifest: `workflows/*.yaml|*.yml` and
 * `routines/<name>/prompt.md`.
 *
 * @module
 */

import { extname, join } from "../_path.ts";
import { byCodeUnit } from "./_sort.ts";
import { observe } from "./_observe.ts";
import { hasControlCharacters } from "./dir_name.ts";

const WORKFLOW_EXTENSIONS = [".yaml", ".yml"];

/**
 * Workflow names: the stems of the `.yaml`/`.yml` files in `<dir>/workflows`, sorted, each once.
 * Requires `--allow-read`.
 *
 * @param dir The plugin dir.
 * @returns The names (none when the folder is missing).
 * @example
 * ```ts
 * import { findWorkflows } from "./conventions.ts";
 * console.assert((await findWorkflows("/nonexistent")).length === 0);
 * ```
 */
export function findWorkflows(dir: string): string[] {
  const names = new Set<string>();
  for (const entry of listDir(join(dir, "workflows"))) {
    const ext = extname(entry.name);
    // Names are listed to users: control characters (escapes, newlines) never are.
    if (!WORKFLOW_EXTENSIONS.includes(ext) || entry.name.startsWith(".")) continue;
    if (hasControlCharacters(entry.name)) continue;
    if (isFile(join(dir, "workflows", entry.name), entry)) {
      names.add(entry.name.slice(0, -ext.length));
    }
  }
  return [...names].sort(byCodeUnit);
}

/**
 * Routine names: the folders of `<dir>/routines` that hold a `prompt.md` file, sorted.
 * Requires `--allow-read`.
 *
 * @param dir The plugin dir.
 * @returns The names (none when the folder is missing).
 * @example
 * ```ts
 * import { findRoutines } from "./conventions.ts";
 * console.assert((await findRoutines("/nonexistent")).length === 0);
 * ```
 */
export function findRoutines(dir: string): string[] {
  const names: string[] = [];
  for (const entry of listDir(join(dir, "routines"))) {
    if (entry.name.startsWith(".") || hasControlCharacters(entry.name)) continue;
    observe(join(dir, "routines", entry.name, "prompt.md"));
    if (statIsFile(join(dir, "routines", entry.name, "prompt.md"))) names.push(entry.name);
  }
  return names.sort(byCodeUnit);
}

function listDir(path: string): Deno.DirEntry[] {
  observe(path);
  try {
    return [...Deno.readDirSync(path)];
  } catch {
    // Missing, not a folder, or unreadable: the plugin simply has none.
    return [];
  }
}

function isFile(path: string, entry: Deno.DirEntry): boolean {
  if (!entry.isSymlink) return entry.isFile;
  observe(path);
  return statIsFile(path);
}

function statIsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}
