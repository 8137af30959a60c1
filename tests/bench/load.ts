/**
 * Benchmark (5): loading 1,000 plugins (a hook and an action each), against its goals,
 * each beside its baseline measured in the same run:
 * - `loadPlugins` in process, cold (no index cache): at most 54 ms (ty's Go `LoadPlugins`);
 * - `loadPluginsCached` in process, warm (index cache valid): at most 15 ms;
 * - `tyhooks plugins list --json` end to end, warm: at most 54 ms more than `deno run` of an
 *   empty file (cold shown beside it).
 *
 * Beside each row stands the part no implementation of SPEC's checks avoids, measured in the same
 * run: for a warm load one `Deno.lstatSync` of each path it must revalidate (the plugins dir, each
 * plugin dir, manifest and script: 4,001 here); for a cold load that, plus a listing of each dir and
 * a read of each manifest, with nothing parsed.
 */

import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { loadPluginsCached } from "../../lib/plugins/cache.ts";
import { MAIN, PERMISSION_FLAGS, V8_FLAGS } from "../_cli.ts";
import { median, ms } from "./_stats.ts";
import { pluginTree } from "./_tree.ts";
import { settled } from "../_index.ts";

const PLUGINS = 1000;

async function run(args: string[], env: Record<string, string>): Promise<number> {
  const start = performance.now();
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSION_FLAGS, ...V8_FLAGS, ...args],
    env,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const elapsed = performance.now() - start;
  if (!out.success) throw new Error(`${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return elapsed;
}

// The plugins dir and everything below it: the paths the cache records for this tree.
function treePaths(dir: string): string[] {
  const paths = [dir];
  for (const entry of Deno.readDirSync(dir)) {
    const path = join(dir, entry.name);
    paths.push(path);
    if (entry.isDirectory) paths.push(...treePaths(path).slice(1));
  }
  return paths;
}

// What a cold load cannot skip, nothing parsed: each path lstat'd, each dir listed, each manifest read.
function coldSystemCalls(paths: string[]): void {
  for (const path of paths) {
    const info = Deno.lstatSync(path);
    if (info.isDirectory) { for (const _ of Deno.readDirSync(path)); }
    else if (path.endsWith(".yaml")) Deno.readFileSync(path);
  }
}

function verdict(value: number, limit: number): string {
  return `goal <= ${ms(limit)}: ${value <= limit ? "met" : "not met"}`;
}

/** Runs the comparison; returns table rows `[what, result, baseline, goal]`. */
export async function benchLoad(rounds = 7): Promise<string[][]> {
  const dir = await pluginTree(PLUGINS, { action: true });
  const home = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
  const empty = join(home, "empty.ts");
  await Deno.writeTextFile(empty, "");
  const cacheDir = join(home, "lib-cache");
  const warmEnv = { XDG_CACHE_HOME: join(home, "cli-cache") };
  const list = [MAIN, "plugins", "list", "--json", "--plugins-dir", dir];
  try {
    await settled();
    for (let i = 0; i < 2; i++) {
      await loadPluginsCached(dir, { cacheDir });
      await run(list, warmEnv);
    }
    const paths = treePaths(dir);
    const times = {
      cold: [] as number[],
      warm: [] as number[],
      lstat: [] as number[],
      coldCalls: [] as number[],
    };
    const cli = { empty: [] as number[], warm: [] as number[], cold: [] as number[] };
    for (let i = 0; i < rounds; i++) {
      let start = performance.now();
      const index = await loadPlugins(dir);
      times.cold.push(performance.now() - start);
      if (index.plugins.length !== PLUGINS) throw new Error("load failed");
      start = performance.now();
      const cached = await loadPluginsCached(dir, { cacheDir });
      times.warm.push(performance.now() - start);
      if (!cached.hit) throw new Error(`cache miss: ${cached.reason}`);
      start = performance.now();
      for (const path of paths) Deno.lstatSync(path);
      times.lstat.push(performance.now() - start);
      start = performance.now();
      coldSystemCalls(paths);
      times.coldCalls.push(performance.now() - start);
      cli.empty.push(await run([empty], {}));
      cli.warm.push(await run(list, warmEnv));
      cli.cold.push(await run(list, { TYHOOKS_NO_CACHE: "1" }));
    }
    const [cold, warm, lstat] = [median(times.cold), median(times.warm), median(times.lstat)];
    const revalidation = `${paths.length.toLocaleString("en")} lstat calls alone: ${ms(lstat)}`;
    const floor = median(cli.empty);
    const listWarm = median(cli.warm);
    return [
      [
        "loadPlugins, 1,000 plugins, cold",
        ms(cold),
        `ty's Go LoadPlugins: 54 ms; the system calls alone: ${ms(median(times.coldCalls))}`,
        verdict(cold, 54),
      ],
      [
        "loadPluginsCached, 1,000 plugins, warm",
        ms(warm),
        `cold: ${ms(cold)}; ${revalidation}`,
        verdict(warm, 15),
      ],
      [
        "tyhooks plugins list --json, 1,000, warm",
        `${ms(listWarm)} (+${ms(listWarm - floor)})`,
        `deno run empty.ts: ${ms(floor)}; ${revalidation}`,
        `goal <= +54.00 ms: ${listWarm - floor <= 54 ? "met" : "not met"}`,
      ],
      [
        "tyhooks plugins list --json, 1,000, cold",
        `${ms(median(cli.cold))} (+${ms(median(cli.cold) - floor)})`,
        "same",
        "",
      ],
    ];
  } finally {
    await Deno.remove(dir, { recursive: true });
    await Deno.remove(home, { recursive: true });
  }
}

if (import.meta.main) {
  for (const row of await benchLoad()) console.log(row.join("  "));
}
