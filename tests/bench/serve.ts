/**
 * Benchmark (serve): 2,000 `POST /v1/route` requests at 50 in flight against a real
 * `tyhooks serve` with a trivial router, compared with spawning the router directly, measured
 * in the same run:
 *
 * - a bare spawn (`new Deno.Command(router).output()`), one at a time: the cost of the work
 *   itself;
 * - the same 2,000 bare spawns at 50 in flight from this process: what 50-deep queueing alone
 *   costs on this machine, so the daemon's p50 at 50 in flight has a fair baseline;
 * - the router through `runScript`, one at a time: the spawn the daemon really makes (its own
 *   process group via setsid(1), output capture, group cleanup), as SPEC requires;
 * - the daemon at 1 in flight: per-request cost without queueing.
 *
 * At 50 in flight on a small machine a request's latency is mostly queueing (Little's law: 50
 * divided by the throughput), so its p50 is compared both with one bare spawn and with bare
 * spawns at the same depth.
 *
 * Memory: the daemon's VmRSS after the first 100 requests of the run, after the run, and after
 * three more runs (a leak keeps growing; a high-water mark does not).
 */

import { startServe, tempSocket } from "../cli/_serve.ts";
import { median, ms, quantile, ratio } from "./_stats.ts";
import { routerTree } from "./_tree.ts";
import { writeTree } from "../_cli.ts";
import { runScript } from "../../lib/process/run_script.ts";

function rssKb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN);
}

/** Runs `total` calls of `fn`, `concurrency` at a time; returns each call's latency. */
async function load(
  total: number,
  concurrency: number,
  fn: () => Promise<void>,
): Promise<{ times: number[]; errors: string[]; wallMs: number }> {
  const times: number[] = [];
  const errors: string[] = [];
  let next = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < total) {
      next++;
      const t = performance.now();
      try {
        await fn();
        times.push(performance.now() - t);
      } catch (error) {
        errors.push((error as Error).message);
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { times, errors, wallMs: performance.now() - started };
}

/** Runs the benchmark; returns the figures as table rows `[what, value, note]`. */
export async function benchServe(total = 2000, inFlight = 50): Promise<string[][]> {
  const { dir: plugins, router } = await routerTree();
  const spawn = async () => {
    const out = await new Deno.Command(router, { stdout: "piped", stderr: "piped" }).output();
    if (!out.success) throw new Error(`router exited ${out.code}`);
  };
  const daemon = await startServe([
    "--listen",
    `unix:${await tempSocket()}`,
    "--plugins-dir",
    plugins,
  ]);
  try {
    const route = async () => {
      const answer = await daemon.call("POST", "/v1/route", { task: { id: 1 } });
      if (answer.status !== 200 || answer.body.claude_config_dir !== "/profiles/a") {
        throw new Error(`HTTP ${answer.status}: ${JSON.stringify(answer.body)}`);
      }
    };

    // The run: 2,000 requests at 50 in flight, RSS taken after the first 100 of them.
    const first = await load(100, inFlight, route);
    const rssFirst = rssKb(daemon.pid);
    const rest = await load(total - 100, inFlight, route);
    const rssAfter = rssKb(daemon.pid);
    const loaded = {
      times: [...first.times, ...rest.times],
      errors: [...first.errors, ...rest.errors],
      wallMs: first.wallMs + rest.wallMs,
    };
    // Three more runs: does memory keep growing, or was that a high-water mark?
    for (let i = 0; i < 3; i++) loaded.errors.push(...(await load(total, inFlight, route)).errors);
    const rssSteady = rssKb(daemon.pid);
    const single = await load(300, 1, route);
    const bare = await load(300, 1, spawn);
    const isolated = await load(300, 1, async () => {
      const result = await runScript(router, { timeoutMs: 5000 });
      if (result.exit_code !== 0) throw new Error(`router exited ${result.exit_code}`);
    });
    const bareLoaded = await load(total, inFlight, spawn);

    const bareP50 = median(bare.times);
    const errors = [...loaded.errors, ...single.errors];
    const p = (times: number[]) => `${ms(median(times))} / ${ms(quantile(times, 0.99))}`;
    return [
      ["bare spawn, 1 at a time: p50", ms(bareP50), "baseline"],
      [
        "runScript (own process group), 1 at a time: p50",
        ms(median(isolated.times)),
        ratio(median(isolated.times), bareP50),
      ],
      ["daemon, 1 in flight: p50 / p99", p(single.times), ratio(median(single.times), bareP50)],
      [
        `daemon, ${inFlight} in flight: p50 / p99`,
        p(loaded.times),
        ratio(median(loaded.times), bareP50),
      ],
      [
        `bare spawn, ${inFlight} in flight: p50 / p99`,
        p(bareLoaded.times),
        ratio(median(bareLoaded.times), bareP50),
      ],
      [
        `throughput at ${inFlight} in flight`,
        `${Math.round(total / (loaded.wallMs / 1000))} req/s (bare spawns: ${
          Math.round(total / (bareLoaded.wallMs / 1000))
        }/s)`,
        "",
      ],
      ["errors", `${errors.length} of ${total * 4 + 300}`, errors[0] ?? ""],
      [
        "daemon RSS after the first 100 / after the run",
        `${Math.round(rssFirst / 1024)} MB / ${Math.round(rssAfter / 1024)} MB`,
        ratio(rssAfter, rssFirst),
      ],
      [
        `daemon RSS after the run / after ${3 * total} more`,
        `${Math.round(rssAfter / 1024)} MB / ${Math.round(rssSteady / 1024)} MB`,
        ratio(rssSteady, rssAfter),
      ],
    ];
  } finally {
    await daemon.stop();
    await Deno.remove(plugins, { recursive: true });
  }
}

/** A plugins dir with one `pre_tool_call` guard that allows everything, persistent or not. */
async function guardTree(persistent: boolean): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
  await writeTree(dir, {
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n" +
      (persistent ? "tyhooks:\n  pre_tool_call: {persistent: true}\n" : ""),
    // A read loop: run once per call it reads one line and exits; persistent, it serves all.
    "g/guard.sh":
      '#!/bin/sh\nwhile IFS= read -r line; do echo \'{"action":"allow","reason":""}\'; done\n',
  });
  return dir;
}

/**
 * The daemon answering `POST /v1/tool/pre` with a persistent guard, and with the same guard run
 * once per call: p50 at 1 in flight, decisions per second at `inFlight`, errors over `total`
 * requests, and the daemon's RSS after the first 1,000 requests and after the run.
 */
export async function benchGuard(total = 20_000, inFlight = 16): Promise<string[][]> {
  const rows: string[][] = [];
  for (const persistent of [true, false]) {
    const plugins = await guardTree(persistent);
    const daemon = await startServe([
      "--listen",
      `unix:${await tempSocket()}`,
      "--plugins-dir",
      plugins,
    ]);
    const what = persistent ? "persistent guard" : "one-shot guard";
    try {
      const pre = async () => {
        const answer = await daemon.call("POST", "/v1/tool/pre", { tool: "bash", args: {} });
        if (answer.status !== 200 || answer.body.action !== "allow") {
          throw new Error(`HTTP ${answer.status}: ${JSON.stringify(answer.body)}`);
        }
      };
      // One-shot spawns cost ~2 ms each: a tenth of the requests says as much.
      const n = persistent ? total : total / 10;
      const single = await load(persistent ? 2000 : 300, 1, pre);
      const first = await load(1000, inFlight, pre);
      const rssFirst = rssKb(daemon.pid);
      const rest = await load(n - 1000, inFlight, pre);
      const rssAfter = rssKb(daemon.pid);
      const errors = [...single.errors, ...first.errors, ...rest.errors];
      rows.push(
        [
          `${what}, 1 in flight: p50 / p99`,
          `${ms(median(single.times))} / ${ms(quantile(single.times, 0.99))}`,
          persistent ? "goal <= 0.3 ms" : "",
        ],
        [
          `${what}, ${inFlight} in flight: decisions/s`,
          `${Math.round((n - 1000) / (rest.wallMs / 1000))}/s`,
          persistent ? "goal >= 5,000/s" : "",
        ],
        [
          `${what}: errors`,
          `${errors.length} of ${n + single.times.length + single.errors.length}`,
          errors[0] ?? "",
        ],
        [
          `${what}: daemon RSS after 1,000 / after ${n}`,
          `${Math.round(rssFirst / 1024)} MB / ${Math.round(rssAfter / 1024)} MB`,
          `${ratio(rssAfter, rssFirst)}${persistent ? " (goal <= 1.2x)" : ""}`,
        ],
      );
    } finally {
      await daemon.stop();
      await Deno.remove(plugins, { recursive: true });
    }
  }
  return rows;
}

if (import.meta.main) {
  const rows = await benchServe();
  console.log("serve: POST /v1/route with a trivial router (ratios to a bare spawn's p50):");
  for (const row of rows) console.log(`  ${row[0].padEnd(46)} ${row[1].padStart(24)}  ${row[2]}`);
  console.log("serve: POST /v1/tool/pre, persistent guard and one-shot guard:");
  for (const row of await benchGuard()) {
    console.log(`  ${row[0].padEnd(46)} ${row[1].padStart(24)}  ${row[2]}`);
  }
}
