/**
 * Benchmark (1): the runner's per-call time against (a) a bare `Deno.Command(script).output()`
 * and (b) the cheapest spawn that still puts the script in its own process group, measured in
 * the same run, interleaved so machine noise hits all three alike. Then 1,000 sequential runs
 * to show the runner's memory stays flat.
 */

import { runScript } from "../../lib/process/run_script.ts";
import { findSetsid } from "../../lib/process/group.ts";
import { median, ms, ratio, rssMb } from "./_stats.ts";

const script = await Deno.makeTempFile({ suffix: ".sh" });
await Deno.writeTextFile(script, "#!/bin/sh\necho ok\n");
await Deno.chmod(script, 0o755);

const setsid = findSetsid();
const candidates: Record<string, () => Promise<unknown>> = {
  "bare output()": () => new Deno.Command(script, { stdout: "piped", stderr: "piped" }).output(),
  "setsid(1) output()": () =>
    new Deno.Command(setsid ?? script, {
      args: setsid ? [script] : [],
      stdout: "piped",
      stderr: "piped",
    }).output(),
  "detached spawn()": async () => {
    const child = new Deno.Command(script, { stdout: "piped", stderr: "piped", detached: true })
      .spawn();
    await child.output();
  },
  "runScript()": () => runScript(script, { timeoutMs: 5000 }),
};

/** Runs the comparison; returns the figures as table rows. */
export async function benchRunner(rounds = 300): Promise<string[][]> {
  const times: Record<string, number[]> = Object.fromEntries(
    Object.keys(candidates).map((k) => [k, []]),
  );
  for (let i = 0; i < 10; i++) for (const fn of Object.values(candidates)) await fn();
  for (let i = 0; i < rounds; i++) {
    for (const [name, fn] of Object.entries(candidates)) {
      const start = performance.now();
      await fn();
      times[name].push(performance.now() - start);
    }
  }
  const floor = median(times["setsid(1) output()"]);
  const rows = Object.entries(times).map((
    [name, t],
  ) => [name, ms(median(t)), ratio(median(t), floor)]);

  const rss: number[] = [];
  for (let i = 1; i <= 1000; i++) {
    await runScript(script, { timeoutMs: 5000 });
    if (i === 100 || i === 1000) rss.push(rssMb());
  }
  rows.push(["RSS after 100 / 1,000 runs", `${rss[0]} MB / ${rss[1]} MB`, ratio(rss[1], rss[0])]);
  return rows;
}

if (import.meta.main) {
  const rows = await benchRunner();
  console.log("runner per call (median), ratio to setsid(1) output():");
  for (const row of rows) console.log(`  ${row[0].padEnd(28)} ${row[1].padStart(18)}  ${row[2]}`);
  await Deno.remove(script);
}
