/**
 * The name a folder's `plugin.yaml` declares, for `plugins add`: enough to know what is being
 * installed and whether it replaces the same plugin.
 *
 * @module
 */

import { join } from "../_path.ts";

/** The declared name, or why there is none. */
export type NameResult = { ok: true; name: string } | { ok: false; reason: string };

/**
 * Reads the `name` of `<dir>/plugin.yaml`. Requires `--allow-read`.
 */
export async function readPluginName(dir: string): Promise<NameResult> {
  const path = join(dir, "plugin.yaml");
  if ((await Deno.lstat(path).catch(() => null)) === null) {
    return { ok: false, reason: "it has no plugin.yaml" };
  }
  const { readManifest } = await import("./read_manifest.ts");
  const read = await readManifest(path);
  if (!read.ok) {
    const at = read.at === null ? "" : ` at ${read.at.line}:${read.at.column}`;
    return { ok: false, reason: `its plugin.yaml${at} cannot be used: ${read.message}` };
  }
  const data = read.lenient as { name?: unknown } | null;
  const name = typeof data === "object" && data !== null ? data.name : undefined;
  if (typeof name !== "string" || name === "") {
    return { ok: false, reason: 'its plugin.yaml has no "name"' };
  }
  return { ok: true, name };
}
