/**
 * Benchmark (4): one event fanned out to 1, 10 and 50 plugins (library `Runner.fire`), median
 * per fire, and the ratio to the 1-plugin fire measured in the same run.
 */

import { loadPlugins } from "../../lib/plugins/load.ts";
import { Runner } from "../../lib/hooks/runner.ts";
import { median, ms, ratio } from "./_stats.ts";
import { pluginTree } from "./_tree.ts";

/** Runs the comparison; returns table rows. */
export async function benchFanout(rounds = 30): Promise<string[][]> {
  const runners = new Map<number, Runner>();
  const dirs: string[] = [];
  try {
    for (const count of [1, 10, 50]) {
      dirs.push(await pluginTree(count));
      runners.set(count, new Runner(await loadPlugins(dirs[dirs.length - 1])));
    }
    return await fireEach(runners, rounds);
  } finally {
    for (const dir of dirs) await Deno.remove(dir, { recursive: true });
  }
}

async function fireEach(runners: Map<number, Runner>, rounds: number): Promise<string[][]> {
  const times = new Map<number, number[]>([...runners.keys()].map((k) => [k, []]));
  for (let i = 0; i < rounds; i++) {
    for (const [count, runner] of runners) {
      const start = performance.now();
      const runs = await runner.fire("task.done");
      times.get(count)!.push(performance.now() - start);
      if (runs.length !== count || runs.some((r) => r.exit_code !== 0)) {
        throw new Error("fan-out failed");
      }
    }
  }
  const base = median(times.get(1)!);
  return [...times].map((
    [count, t],
  ) => [`fire to ${count} plugin(s)`, ms(median(t)), ratio(median(t), base)]);
}

if (import.meta.main) {
  for (const row of await benchFanout()) console.log(row.join("  "));
}
