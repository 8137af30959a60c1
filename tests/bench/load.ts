/**
 * Benchmark (5): loading 1,000 plugins, in the library and as one `tyhooks plugins list` call,
 * against loading 1 plugin measured in the same run.
 */

import { loadPlugins } from "../../lib/plugins/load.ts";
import { MAIN, PERMISSION_FLAGS } from "../_cli.ts";
import { median, ms, ratio } from "./_stats.ts";
import { pluginTree } from "./_tree.ts";

async function listOnce(dir: string): Promise<void> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--quiet",
      ...PERMISSION_FLAGS,
      MAIN,
      "plugins",
      "list",
      "--json",
      "--plugins-dir",
      dir,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error("plugins list failed");
}

/** Runs the comparison; returns table rows. */
export async function benchLoad(rounds = 7): Promise<string[][]> {
  const one = await pluginTree(1);
  const thousand = await pluginTree(1000);
  const lib = { 1: [] as number[], 1000: [] as number[] };
  const cli = { 1: [] as number[], 1000: [] as number[] };
  for (let i = 0; i < rounds; i++) {
    for (const [count, dir] of [[1, one], [1000, thousand]] as const) {
      let start = performance.now();
      const index = await loadPlugins(dir);
      lib[count].push(performance.now() - start);
      if (index.plugins.length !== count) throw new Error("load failed");
      start = performance.now();
      await listOnce(dir);
      cli[count].push(performance.now() - start);
    }
  }
  return [
    ["loadPlugins, 1 plugin", ms(median(lib[1])), "1.00x"],
    ["loadPlugins, 1,000 plugins", ms(median(lib[1000])), ratio(median(lib[1000]), median(lib[1]))],
    ["tyhooks plugins list, 1 plugin", ms(median(cli[1])), "1.00x"],
    [
      "tyhooks plugins list, 1,000 plugins",
      ms(median(cli[1000])),
      ratio(median(cli[1000]), median(cli[1])),
    ],
  ];
}

if (import.meta.main) {
  for (const row of await benchLoad()) console.log(row.join("  "));
}
