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
import { guardTree, routerTree } from "./_tree.ts";
import { cpuMs, load, loadRaw, RawHttp, rssKb } from "./_daemon.ts";
import { V8_FLAGS, writeTree } from "../_cli.ts";
import { runScript } from "../../lib/process/run_script.ts";
import { PersistentHooks } from "../../lib/serve/persistent.ts";
import { loadPlugins } from "../../lib/plugins/load.ts";

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

const PRE_BODY = JSON.stringify({ tool: "bash", args: {} });
const allows = (body: string) => JSON.parse(body).action === "allow";
const perRequestUs = (cpuMs: number, n: number) => `${Math.round((cpuMs / n) * 1000)} us`;

/**
 * The daemon answering `POST /v1/tool/pre` with a persistent guard, and with the same guard run
 * once per call: p50 at 1 in flight, decisions per second at `inFlight`, errors over `total`
 * requests, the daemon's RSS after the first 1,000 requests and after the run, and the CPU each
 * party spends per decision. The client is {@linkcode RawHttp}, one connection per request in
 * flight; the rows after them measure what it saves over `fetch` and the parts a decision cannot
 * go below: HTTP alone (`GET /v1/health`, same client) and the guard's pipe alone (the daemon's
 * persistent hook code asked in a process of its own with the daemon's V8 flags, no HTTP).
 */
export async function benchGuard(total = 20_000, inFlight = 16): Promise<string[][]> {
  const rows: string[][] = [[
    "client",
    "raw HTTP/1.1",
    "keep-alive, one unix-socket connection per request in flight",
  ]];
  const pre = RawHttp.request("POST", "/v1/tool/pre", PRE_BODY);
  for (const persistent of [true, false]) {
    const plugins = await guardTree(persistent);
    const daemon = await startServe([
      "--listen",
      `unix:${await tempSocket()}`,
      "--plugins-dir",
      plugins,
    ]);
    const what = persistent ? "persistent guard" : "one-shot guard";
    const run = (n: number, conns: number, request = pre, check = allows) =>
      loadRaw(daemon.socket!, daemon.pid, { total: n, conns, request, check });
    try {
      // One-shot spawns cost ~2 ms each: a tenth of the requests says as much.
      const n = persistent ? total : total / 10;
      const single = await run(persistent ? 2000 : 300, 1);
      const first = await run(1000, inFlight);
      const rssFirst = rssKb(daemon.pid);
      const rest = await run(n - 1000, inFlight);
      const rssAfter = rssKb(daemon.pid);
      const errors = [...single.errors, ...first.errors, ...rest.errors];
      const cpu = rest.cpu;
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
          `${what}, ${inFlight} in flight: CPU per decision`,
          `daemon ${perRequestUs(cpu.daemon, n - 1000)}`,
          `its children (the guard) ${perRequestUs(cpu.children, n - 1000)}, client ${
            perRequestUs(cpu.client, n - 1000)
          }`,
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
      if (!persistent) continue;
      // What fetch would have cost the client (the same requests, Deno's HTTP client).
      const fetchPre = async () => {
        const answer = await daemon.call("POST", "/v1/tool/pre", { tool: "bash", args: {} });
        if (answer.status !== 200 || answer.body.action !== "allow") {
          throw new Error(`HTTP ${answer.status}: ${JSON.stringify(answer.body)}`);
        }
      };
      const fetchOne = await load(1000, 1, fetchPre);
      const clientBefore = cpuMs(Deno.pid);
      const fetchMany = await load(5000, inFlight, fetchPre);
      rows.push([
        `  the same with fetch: p50 at 1 / decisions/s at ${inFlight}`,
        `${ms(median(fetchOne.times))} / ${Math.round(5000 / (fetchMany.wallMs / 1000))}/s`,
        `client ${perRequestUs(cpuMs(Deno.pid) - clientBefore, 5000)} per decision`,
      ]);
      // The floor: HTTP alone, GET /v1/health with the same client.
      const health = RawHttp.request("GET", "/v1/health");
      const ok = (body: string) => JSON.parse(body).ok === true;
      const healthOne = await run(2000, 1, health, ok);
      const healthMany = await run(10_000, inFlight, health, ok);
      rows.push([
        `  floor: GET /v1/health, p50 at 1 / answers/s at ${inFlight}`,
        `${ms(median(healthOne.times))} / ${Math.round(10_000 / (healthMany.wallMs / 1000))}/s`,
        `daemon ${perRequestUs(healthMany.cpu.daemon, 10_000)}, client ${
          perRequestUs(healthMany.cpu.client, 10_000)
        } per answer`,
      ]);
    } finally {
      await daemon.stop();
      await Deno.remove(plugins, { recursive: true });
    }
  }
  rows.push(await pipeFloor(inFlight));
  return rows;
}

/** The guard's pipe alone: the figures of {@linkcode askDirectly}, run with the daemon's V8 flags. */
async function pipeFloor(inFlight: number): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--allow-all", ...V8_FLAGS, import.meta.filename!, "--pipe-floor", `${inFlight}`],
    stderr: "inherit",
  }).output();
  const figures = JSON.parse(new TextDecoder().decode(out.stdout));
  return [
    `  floor: the guard's pipe, no HTTP: p50 at 1 / answers/s at ${inFlight}`,
    `${ms(figures.p50)} / ${figures.rate}/s`,
    `its caller ${figures.caller} us, guard ${figures.guard} us per answer` +
    (figures.errors > 0 ? `, ${figures.errors} errors` : ""),
  ];
}

/** Asks the persistent guard through the daemon's own code, in this process, without HTTP. */
async function askDirectly(inFlight: number) {
  const plugins = await guardTree(true);
  const [plugin] = (await loadPlugins(plugins)).plugins;
  const hooks = new PersistentHooks();
  const signal = new AbortController().signal;
  const stdin = JSON.stringify({
    hook: "pre_tool_call",
    tool: "bash",
    args: {},
    platform: "",
    user_id: "",
  }) + "\n";
  const ask = async () => {
    const result = await hooks.ask({
      event: "pre_tool_call",
      plugin,
      script: plugin.hooks.pre_tool_call,
      stdin,
      timeoutMs: 30_000,
      graceMs: 200,
      signal,
    }, () => Promise.reject(new Error("not persistent")));
    if (!allows(result.stdout)) throw new Error(result.error ?? result.stdout);
  };
  try {
    const one = await load(2000, 1, ask);
    const caller = cpuMs(Deno.pid);
    const guard = cpuMs(Deno.pid, true);
    const many = await load(20_000, inFlight, ask);
    return {
      p50: median(one.times),
      rate: Math.round(20_000 / (many.wallMs / 1000)),
      caller: Math.round(((cpuMs(Deno.pid) - caller) / 20_000) * 1000),
      guard: Math.round(((cpuMs(Deno.pid, true) - guard) / 20_000) * 1000),
      errors: [...one.errors, ...many.errors].length,
    };
  } finally {
    await hooks.close();
    await Deno.remove(plugins, { recursive: true });
  }
}

/** One run of {@linkcode benchEvents}. */
interface EventsRun {
  /** Each 202's latency, ms. */
  accept: number[];
  /** From the first request until every hook has run, ms. */
  wallMs: number;
  /** The daemon's CPU (its own, not its hooks'), ms. */
  daemonCpuMs: number;
  errors: string[];
}

/**
 * The daemon taking events: `total` `POST /v1/events/task.done` over `inFlight` kept-alive
 * connections (raw HTTP/1.1), each run by one trivial hook (`printf x >> count`: no process but
 * the hook's own). The 202's latency is what accepting costs the caller (the spool: the event
 * written, fsynced, renamed and its dir fsynced before the answer); events/s counts from the
 * first request until every hook has run. `main` runs another checkout's daemon.
 */
export async function benchEvents(
  options: { total?: number; inFlight?: number; main?: string } = {},
): Promise<EventsRun> {
  const total = options.total ?? 2000;
  const inFlight = options.inFlight ?? 16;
  const plugins = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
  await writeTree(plugins, {
    "n/plugin.yaml": "name: n\nhooks:\n  task.done: done.sh\n",
    "n/done.sh": '#!/bin/sh\nprintf x >> "$TASK_PLUGIN_DIR/count"\n',
  });
  const count = `${plugins}/n/count`;
  const daemon = await startServe(
    ["--listen", `unix:${await tempSocket()}`, "--plugins-dir", plugins],
    { main: options.main },
  );
  const request = RawHttp.request("POST", "/v1/events/task.done", '{"task":{"id":1}}');
  const conns = await Promise.all(
    Array.from({ length: inFlight }, () => RawHttp.connect(daemon.socket!)),
  );
  try {
    const cpu = cpuMs(daemon.pid);
    const started = performance.now();
    const sent = await load(total, inFlight, async (worker) => {
      const answer = await conns[worker].send(request);
      if (answer.status !== 202) throw new Error(`HTTP ${answer.status}: ${answer.body}`);
    });
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      const size = await Deno.stat(count).then((i) => i.size, () => 0);
      if (size >= total - sent.errors.length) break;
      await new Promise((r) => setTimeout(r, 10));
    }
    return {
      accept: sent.times,
      wallMs: performance.now() - started,
      daemonCpuMs: cpuMs(daemon.pid) - cpu,
      errors: sent.errors,
    };
  } finally {
    for (const conn of conns) conn.close();
    await daemon.stop();
    await Deno.remove(plugins, { recursive: true });
  }
}

/** One run of {@linkcode benchConsulted}: p50s in ms, and decisions a second. */
interface ConsultedRun {
  routeP50: number;
  preP50: number;
  prePerSecond: number;
  errors: number;
}

/**
 * The consulted paths through the daemon (`main`: another checkout's), for comparing trees:
 * `POST /v1/route` with a trivial router and `POST /v1/tool/pre` with a persistent guard, p50 at
 * 1 in flight, and the guard's decisions a second at 16 in flight (raw HTTP/1.1).
 */
export async function benchConsulted(main?: string): Promise<ConsultedRun> {
  const { dir: plugins } = await routerTree();
  const guard = await guardTree(true);
  await Deno.rename(`${guard}/g`, `${plugins}/g`);
  await Deno.remove(guard, { recursive: true });
  const daemon = await startServe(
    ["--listen", `unix:${await tempSocket()}`, "--plugins-dir", plugins],
    { main },
  );
  const run = (n: number, conns: number, request: Uint8Array, check: (b: string) => boolean) =>
    loadRaw(daemon.socket!, daemon.pid, { total: n, conns, request, check });
  try {
    const routes = (body: string) => JSON.parse(body).claude_config_dir === "/profiles/a";
    const route = RawHttp.request("POST", "/v1/route", '{"task":{"id":1}}');
    const pre = RawHttp.request("POST", "/v1/tool/pre", PRE_BODY);
    await run(50, 1, route, routes);
    const routeOne = await run(300, 1, route, routes);
    const preOne = await run(2000, 1, pre, allows);
    const preMany = await run(10_000, 16, pre, allows);
    return {
      routeP50: median(routeOne.times),
      preP50: median(preOne.times),
      prePerSecond: 10_000 / (preMany.wallMs / 1000),
      errors: [routeOne, preOne, preMany].reduce((n, r) => n + r.errors.length, 0),
    };
  } finally {
    await daemon.stop();
    await Deno.remove(plugins, { recursive: true });
  }
}

/**
 * This tree's daemon against `other`'s, alternating `rounds` times: events (throughput and the
 * 202's latency) and the consulted paths (route, tool pre); medians and the ratios this/other.
 */
export async function againstRows(other: string, rounds = 5): Promise<string[][]> {
  const events: Record<"this" | "other", EventsRun[]> = { this: [], other: [] };
  const consulted: Record<"this" | "other", ConsultedRun[]> = { this: [], other: [] };
  const mainOf = { this: undefined, other: `${other}/main.ts` };
  for (let i = 0; i < rounds; i++) {
    // Alternating which goes first, so a trend in the machine's load favours neither.
    const order = i % 2 === 0 ? ["this", "other"] as const : ["other", "this"] as const;
    for (const tree of order) events[tree].push(await benchEvents({ main: mainOf[tree] }));
    for (const tree of order) consulted[tree].push(await benchConsulted(mainOf[tree]));
  }
  const rate = (r: EventsRun) => (r.accept.length / r.wallMs) * 1000;
  const cpu = (r: EventsRun) => (r.daemonCpuMs / r.accept.length) * 1000;
  const rows: string[][] = [];
  const row = (what: string, pick: (tree: "this" | "other") => number[], unit: string) => {
    const [a, b] = [median(pick("this")), median(pick("other"))];
    const show = (v: number) => unit === "ms" ? ms(v) : `${Math.round(v)}${unit}`;
    rows.push([
      what,
      `${show(a)} / ${show(b)}`,
      `${ratio(a, b)}; runs ${pick("this").map((v) => show(v)).join(", ")} / ${
        pick("other").map((v) => show(v)).join(", ")
      }`,
    ]);
  };
  row("events/s, 2,000 at 16 in flight", (t) => events[t].map(rate), "/s");
  row("event 202 p50", (t) => events[t].map((r) => median(r.accept)), "ms");
  row("daemon CPU per event", (t) => events[t].map(cpu), " us");
  row("route p50, 1 in flight", (t) => consulted[t].map((r) => r.routeP50), "ms");
  row("tool pre p50 (persistent), 1 in flight", (t) => consulted[t].map((r) => r.preP50), "ms");
  row("tool pre decisions/s, 16 in flight", (t) => consulted[t].map((r) => r.prePerSecond), "/s");
  const errors = [...events.this, ...events.other].reduce((n, r) => n + r.errors.length, 0) +
    [...consulted.this, ...consulted.other].reduce((n, r) => n + r.errors, 0);
  rows.push(["errors", String(errors), ""]);
  return rows;
}

/** {@linkcode benchEvents} once, as table rows. */
export async function eventRows(): Promise<string[][]> {
  const run = await benchEvents();
  const cpu = (run.daemonCpuMs / run.accept.length) * 1000;
  return [
    [
      "events/s, 2,000 at 16 in flight",
      `${Math.round((run.accept.length / run.wallMs) * 1000)}/s`,
      "until every hook has run",
    ],
    [
      "event 202 p50 / p99",
      `${ms(median(run.accept))} / ${ms(quantile(run.accept, 0.99))}`,
      `daemon CPU ${Math.round(cpu)} us per event; errors ${run.errors.length}`,
    ],
  ];
}

if (import.meta.main) {
  if (Deno.args[0] === "--pipe-floor") {
    console.log(JSON.stringify(await askDirectly(Number(Deno.args[1]))));
  } else if (Deno.args[0] === "--against") {
    // deno run -A tests/bench/serve.ts --against OTHER_CHECKOUT [ROUNDS]
    console.log(`serve, this tree / ${Deno.args[1]} (medians; ratio this/other):`);
    for (const row of await againstRows(Deno.args[1], Number(Deno.args[2] ?? 5))) {
      console.log(`  ${row[0].padEnd(40)} ${row[1].padStart(22)}  ${row[2]}`);
    }
  } else {
    const rows = await benchServe();
    console.log("serve: POST /v1/route with a trivial router (ratios to a bare spawn's p50):");
    for (const row of rows) console.log(`  ${row[0].padEnd(46)} ${row[1].padStart(24)}  ${row[2]}`);
    console.log(
      "serve: POST /v1/tool/pre, persistent guard and one-shot guard (client: raw HTTP/1.1):",
    );
    for (const row of await benchGuard()) {
      console.log(`  ${row[0].padEnd(46)} ${row[1].padStart(24)}  ${row[2]}`);
    }
    console.log("serve: POST /v1/events/task.done with a trivial hook (raw HTTP/1.1, 16 conns):");
    for (const row of await eventRows()) {
      console.log(`  ${row[0].padEnd(46)} ${row[1].padStart(24)}  ${row[2]}`);
    }
  }
}
