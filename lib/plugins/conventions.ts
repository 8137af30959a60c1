/**
 * What a plugin holds by convention rather than in its manifest: `workflows/*.yaml|*.yml` and
 * `routines/<name>/prompt.md`.
 *
 * @module
 */

import { extname, join } from "../_path.ts";
import { byCodeUnit } from "./discover.ts";
import { observe } from "./_observe.ts";
import { hasControlCharacters } from "./dir_name.ts";

const WORKFLOW_EXTENSIONS = [".yaml", ".yml"];

/**
 * Workflow names: the stems of the `.yaml`/`.yml` files in `<dir>/workflows`, sorted, each once.
 * Requires `--allow-read`.
 *
 * @param names The plugin dir's entries, when the caller has listed it (see {@linkcode dirNames}).
 * @returns The names (none when the folder is missing).
 */
export function findWorkflows(dir: string, names?: ReadonlySet<string> | null): string[] {
  const found = new Set<string>();
  for (const entry of listDir(join(dir, "workflows"), names?.has("workflows") ?? true)) {
    const ext = extname(entry.name);
    // Names are listed to users: control characters (escapes, newlines) never are.
    if (!WORKFLOW_EXTENSIONS.includes(ext) || entry.name.startsWith(".")) continue;
    if (hasControlCharacters(entry.name)) continue;
    if (isFile(join(dir, "workflows", entry.name), entry)) {
      found.add(entry.name.slice(0, -ext.length));
    }
  }
  return [...found].sort(byCodeUnit);
}

/**
 * Routine names: the folders of `<dir>/routines` that hold a `prompt.md` file, sorted.
 * Requires `--allow-read`.
 *
 * @param names The plugin dir's entries, when the caller has listed it (see {@linkcode dirNames}).
 * @returns The names (none when the folder is missing).
 */
export function findRoutines(dir: string, names?: ReadonlySet<string> | null): string[] {
  const found: string[] = [];
  for (const entry of listDir(join(dir, "routines"), names?.has("routines") ?? true)) {
    if (entry.name.startsWith(".") || hasControlCharacters(entry.name)) continue;
    observe(join(dir, "routines", entry.name, "prompt.md"));
    if (statIsFile(join(dir, "routines", entry.name, "prompt.md"))) found.push(entry.name);
  }
  return found.sort(byCodeUnit);
}

/**
 * The names in `dir`, or null when it cannot be listed. Most plugins have no `workflows/` and
 * no `routines/`: one listing of the plugin dir says so, where looking for each would fail
 * twice, each failure building an exception (1,000 plugins: tens of ms).
 */
export function dirNames(dir: string): Set<string> | null {
  try {
    return new Set([...Deno.readDirSync(dir)].map((entry) => entry.name));
  } catch {
    return null;
  }
}

function listDir(path: string, mayExist: boolean): Deno.DirEntry[] {
  observe(path);
  if (!mayExist) return [];
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
