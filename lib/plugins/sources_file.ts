/**
 * ty's provenance file, `<plugins-dir>/.sources.json`: install folder name -> where it came from.
 * tyhooks reads and writes it in ty's shape so both tools sharing a plugins dir agree. `ref` is a
 * tyhooks addition (ty reads past it; a later write by ty drops it).
 *
 * @module
 */

import { join } from "../_path.ts";
import { readBounded } from "../read_bounded.ts";

/** The file's name inside the plugins dir. */
export const SOURCES_FILE = ".sources.json";

/** One install folder's provenance, as ty writes it. */
export interface InstalledSource {
  /** ty's catalog id, when ty installed it by id; kept as found. */
  id?: string;
  /** The git URL or local path it came from. */
  source: string;
  /** The folder inside `source` that was copied out (ty's catalog installs); kept as found. */
  subdir?: string;
  /** RFC 3339 time of the last install or update. */
  installed_at?: string;
  /** The branch, tag or commit given with `--ref` (tyhooks). */
  ref?: string;
}

/**
 * Reads the records. A missing, unreadable or malformed file is an empty map, as in ty:
 * provenance is a convenience, never a precondition. Requires `--allow-read`.
 *
 * @returns Records by install folder name.
 */
export async function loadSources(pluginsDir: string): Promise<Record<string, InstalledSource>> {
  const path = join(pluginsDir, SOURCES_FILE);
  let text: string;
  try {
    // A FIFO planted there must not hang the call: regular files only.
    if (!(await Deno.lstat(path)).isFile) return {};
    text = await readBounded(path, { maxBytes: 1 << 20 });
  } catch {
    return {};
  }
  try {
    const data = JSON.parse(text);
    if (typeof data !== "object" || data === null || Array.isArray(data)) return {};
    const out: Record<string, InstalledSource> = {};
    for (const [name, value] of Object.entries(data)) {
      if (
        typeof value === "object" && value !== null && typeof (value as InstalledSource).source ===
          "string"
      ) {
        out[name] = value as InstalledSource;
      }
    }
    return out;
  } catch {
    return {};
  }
}

/**
 * Sets (or, with `null`, drops) one folder's record, rewriting the file as ty does: sorted keys,
 * two-space indent, a final newline, written to a temp file and renamed. Requires
 * `--allow-read` and `--allow-write`.
 *
 * @param pluginsDir The plugins dir (must exist).
 * @param record Its new record, or null to drop it.
 */
export async function saveSource(
  pluginsDir: string,
  folder: string,
  record: InstalledSource | null,
): Promise<void> {
  const all = await loadSources(pluginsDir);
  if (record === null) {
    if (!(folder in all)) return;
    delete all[folder];
  } else {
    all[folder] = record;
  }
  // Go's encoding/json writes map keys sorted, and struct fields in declaration order.
  const sorted = Object.fromEntries(
    Object.keys(all).sort().map((k) => [k, ordered(all[k])]),
  );
  const path = join(pluginsDir, SOURCES_FILE);
  const temp = `${path}.${crypto.randomUUID()}.tmp`;
  await Deno.writeTextFile(temp, JSON.stringify(sorted, null, 2) + "\n", {
    createNew: true,
    mode: 0o644,
  });
  try {
    await Deno.rename(temp, path);
  } catch (error) {
    await Deno.remove(temp).catch(() => {});
    throw error;
  }
}

function ordered(r: InstalledSource): InstalledSource {
  return {
    ...(r.id ? { id: r.id } : {}),
    source: r.source,
    ...(r.subdir ? { subdir: r.subdir } : {}),
    ...(r.installed_at ? { installed_at: r.installed_at } : {}),
    ...(r.ref ? { ref: r.ref } : {}),
  };
}
