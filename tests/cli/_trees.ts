/** Plugin trees and pid files for the CLI tests. */

import { join } from "node:path";

/** A plugin dir entry: `<name>/plugin.yaml` handling `event` with `script`. */
export function pluginFiles(name: string, event: string, script: string): Record<string, string> {
  return {
    [`${name}/plugin.yaml`]: `name: ${name}\nhooks:\n  ${event}: hook.sh\n`,
    [`${name}/hook.sh`]: script,
  };
}

/** Reads the pid files a test's scripts wrote in `dir` (missing ones skipped). */
export async function pidsIn(dir: string, names: string[]): Promise<number[]> {
  const pids: number[] = [];
  for (const name of names) {
    const text = await Deno.readTextFile(join(dir, name)).catch(() => "");
    if (/^\d+\s*$/.test(text)) pids.push(Number(text));
  }
  return pids;
}
