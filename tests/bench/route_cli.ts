/**
 * Benchmark (2): `tyhooks route` end to end, cold (no index cache) and warm (cache valid),
 * against its floor: `deno run` of an empty file plus one spawn of the same router, all
 * measured in the same run, interleaved.
 */

import { join } from "node:path";
import { MAIN, PERMISSION_FLAGS } from "../_cli.ts";
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

/** Runs the comparison; returns table rows. */
export async function benchRouteCli(rounds = 30): Promise<string[][]> {
  const { dir, router } = await routerTree();
  const empty = await Deno.makeTempFile({ suffix: ".ts" });
  const warmCache = await Deno.makeTempDir();
  const deno = Deno.execPath();
  const route = [
    deno,
    "run",
    "--quiet",
    ...PERMISSION_FLAGS,
    MAIN,
    "route",
    "--plugins-dir",
    dir,
    "--task-json",
    '{"id":1}',
  ];
  const cases: Record<string, () => Promise<void>> = {
    "deno run empty.ts": () => run([deno, "run", "--quiet", ...PERMISSION_FLAGS, empty]),
    "router spawn": () => run([router]),
    "route, warm": () => run(route, { XDG_CACHE_HOME: warmCache }),
    "route, cold": async () => run(route, { XDG_CACHE_HOME: join(await Deno.makeTempDir(), "c") }),
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
  return [
    ["floor: deno run empty.ts + router spawn", ms(floor), "1.00x"],
    ...["route, warm", "route, cold"].map((
      k,
    ) => [`tyhooks ${k}`, ms(median(times[k])), ratio(median(times[k]), floor)]),
  ];
}

if (import.meta.main) {
  for (const row of await benchRouteCli()) console.log(row.join("  "));
}
