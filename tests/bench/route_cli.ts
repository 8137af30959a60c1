/**
 * Benchmark (2): `tyhooks route` end to end, cold (no index cache) and warm (cache valid),
 * against its floor: `deno run` of an empty file plus one spawn of the same router, all
 * measured in the same run, interleaved, with the binary's V8 flags. The goal: warm at
 * most 1.5x the floor.
 *
 * Two experiments bound what tyhooks can reach: a Deno program that only spawns the router once
 * through `Deno.Command` (Deno's first child process), and one that also makes Deno build
 * tyhooks' module graph (every module `main.ts` can import, dynamic ones included, as
 * `deno run` does on each start) without running any of it.
 */

import { join } from "node:path";
import { MAIN, PERMISSION_FLAGS, V8_FLAGS } from "../_cli.ts";
import { median, ms, ratio } from "./_stats.ts";
import { routerTree } from "./_tree.ts";

async function run(args: string[], env: Record<string, string> = {}): Promise<void> {
  const out = await new Deno.Command(args[0], {
    args: args.slice(1),
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!out.success) throw new Error(`${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
}

/** Runs the comparison; returns table rows `[what, result, ratio, goal]`. */
export async function benchRouteCli(rounds = 30): Promise<string[][]> {
  const { dir, router } = await routerTree();
  const home = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
  try {
    return await compare(rounds, dir, router, home);
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

async function compare(rounds: number, dir: string, router: string, home: string) {
  const empty = join(home, "empty.ts");
  await Deno.writeTextFile(empty, "");
  const spawnOnce = `await new Deno.Command(${
    JSON.stringify(router)
  }, { stdout: "piped", stderr: "piped" }).output();\n`;
  const spawnOnly = join(home, "spawn_only.ts");
  await Deno.writeTextFile(spawnOnly, spawnOnce);
  const graphSpawn = join(home, "graph_spawn.ts");
  await Deno.writeTextFile(
    graphSpawn,
    `if (Deno.args.length > 99) await import(${JSON.stringify(MAIN)});\n${spawnOnce}`,
  );
  const flags = ["--quiet", ...PERMISSION_FLAGS, ...V8_FLAGS];
  const warmCache = join(home, "warm");
  const deno = Deno.execPath();
  const route = [
    deno,
    "run",
    "--quiet",
    ...PERMISSION_FLAGS,
    ...V8_FLAGS,
    MAIN,
    "route",
    "--plugins-dir",
    dir,
    "--task-json",
    '{"id":1}',
  ];
  const cases: Record<string, () => Promise<void>> = {
    "deno run empty.ts": () =>
      run([deno, "run", "--quiet", ...PERMISSION_FLAGS, ...V8_FLAGS, empty]),
    "router spawn": () => run([router]),
    "spawn only": () => run([deno, "run", ...flags, spawnOnly]),
    "graph + spawn": () =>
      run([deno, "run", ...flags, "--config", join(MAIN, "../deno.json"), graphSpawn]),
    "route, warm": () => run(route, { XDG_CACHE_HOME: warmCache }),
    "route, cold": () => run(route, { TYHOOKS_NO_CACHE: "1" }),
  };
  const times: Record<string, number[]> = Object.fromEntries(
    Object.keys(cases).map((k) => [k, []]),
  );
  for (const fn of Object.values(cases)) await fn();
  for (let i = 0; i < rounds; i++) {
    for (const [name, fn] of Object.entries(cases)) {
      const start = performance.now();
      await fn();
      times[name].push(performance.now() - start);
    }
  }
  const floor = median(times["deno run empty.ts"]) + median(times["router spawn"]);
  const warm = median(times["route, warm"]);
  return [
    [
      "floor: deno run empty.ts + router spawn",
      ms(floor),
      `${ms(median(times["deno run empty.ts"]))} + ${ms(median(times["router spawn"]))}`,
      "",
    ],
    [
      "tyhooks route, warm",
      ms(warm),
      ratio(warm, floor),
      `goal <= 1.50x: ${warm / floor <= 1.5 ? "met" : "not met"}`,
    ],
    [
      "experiment: Deno + one Deno.Command spawn",
      ms(median(times["spawn only"])),
      ratio(median(times["spawn only"]), floor),
      "",
    ],
    [
      "experiment: + building tyhooks' module graph",
      ms(median(times["graph + spawn"])),
      ratio(median(times["graph + spawn"]), floor),
      "nothing of tyhooks runs",
    ],
    [
      "tyhooks route, cold",
      ms(median(times["route, cold"])),
      ratio(median(times["route, cold"]), floor),
      "",
    ],
  ];
}

if (import.meta.main) {
  for (const row of await benchRouteCli()) console.log(row.join("  "));
}
