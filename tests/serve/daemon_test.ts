import assert from "node:assert/strict";
import { type DaemonOptions, startDaemon } from "../../lib/serve/server.ts";
import { createLogger } from "../../lib/log.ts";
import type { PluginIndex } from "../../lib/plugins/types.ts";
import { indexOf } from "../_index.ts";
import { tempDir } from "../_cli.ts";

async function daemonOver(index: PluginIndex, options: { maxProcs?: number; maxQueued?: number }) {
  const lines: string[] = [];
  const path = `${await tempDir({ prefix: "tyh-" })}/t.sock`;
  const spool = await tempDir({ prefix: "tyh-spool-" });
  const daemon = await startDaemon({
    listen: { transport: "unix", path },
    pluginsDir: index.dir,
    load: () => Promise.resolve(index),
    watch: false,
    spoolDir: spool,
    maxProcs: options.maxProcs,
    maxQueuedEvents: options.maxQueued,
    log: createLogger({ format: "json", write: (l) => lines.push(l) }),
  });
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path } });
  const post = async (route: string, body: unknown = {}) => {
    const response = await fetch(`http://localhost${route}`, {
      method: "POST",
      body: JSON.stringify(body),
      client,
    });
    return { status: response.status, body: await response.json() };
  };
  return {
    post,
    lines,
    spool,
    async stop() {
      client.close();
      await daemon.stop();
    },
  };
}

Deno.test("startDaemon() refuses an unknown listen address, an exposed one without a token, and NaN settings, before it binds anything", async () => {
  const pluginsDir = await tempDir();
  const spoolDir = await tempDir();
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ listen: { transport: "bogus" } }, /^Invalid listen address/],
    [{ listen: { transport: "tcp", hostname: "0.0.0.0", port: 0 } }, /without "--token-file"/],
    [{ listen: { transport: "tcp", hostname: "127.0.0.1", port: 0 }, maxProcs: NaN }, /maxProcs/],
    [
      { listen: { transport: "tcp", hostname: "127.0.0.1", port: 0 }, timeouts: { route: NaN } },
      /^Invalid route timeout: NaN ms/,
    ],
  ];
  for (const [options, message] of bad) {
    await assert.rejects(
      // What a JavaScript caller may pass.
      startDaemon({ pluginsDir, spoolDir, watch: false, ...options } as unknown as DaemonOptions),
      { message },
      JSON.stringify(options),
    );
  }
});

Deno.test("daemon: events past the spool bound get 503 and a log line; one waiting at stop stays spooled", async () => {
  const index = await indexOf({ slow: { hooks: { "task.done": "#!/bin/sh\nsleep 1\n" } } });
  const d = await daemonOver(index, { maxProcs: 1, maxQueued: 2 });
  try {
    const answers = [];
    for (let i = 0; i < 6; i++) answers.push(await d.post("/v1/events/task.done"));
    // One running and one waiting fill the spool; the rest are refused, never accepted.
    assert.deepEqual(answers.map((a) => a.status), [202, 202, 503, 503, 503, 503]);
    assert.match(answers[2].body.error, /Cannot spool "task\.done": the spool is full/);
    const logged = d.lines.map((l) => JSON.parse(l)).find((l) => l.msg.includes("Spool full"));
    assert.equal(logged?.total, 1);
  } finally {
    await d.stop();
  }
  const lines = d.lines.map((l) => JSON.parse(l));
  assert.equal(lines.filter((l) => l.msg.startsWith("Spool full")).at(-1).total, 4);
  // The running one finished within the stop timeout; the waiting one is left for the next start.
  assert.equal(lines.find((l) => l.msg.includes("stay in the spool"))?.events, 1);
  const left = [...Deno.readDirSync(d.spool)].filter((e) => e.name.endsWith(".json"));
  assert.equal(left.length, 1);
});

Deno.test("daemon: a route call is not stuck behind slow queued events", async () => {
  const index = await indexOf({
    a: {
      hooks: {
        "task.done": "#!/bin/sh\nsleep 3\n",
        "task.route": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/fast\n",
      },
    },
  });
  const d = await daemonOver(index, { maxProcs: 4 });
  try {
    for (let i = 0; i < 20; i++) assert.equal((await d.post("/v1/events/task.done")).status, 202);
    const started = performance.now();
    const answer = await d.post("/v1/route", { task: { id: 1 } });
    const elapsed = performance.now() - started;
    assert.equal(answer.body.claude_config_dir, "/fast");
    // Behind the events it would wait for 3 s hooks to end.
    assert.ok(elapsed < 1500, `route took ${Math.round(elapsed)} ms`);
  } finally {
    await d.stop();
  }
});

Deno.test("daemon: its connection limits apply: a client that sends no headers is cut, one past maxConns closed", async () => {
  const dir = await tempDir({ prefix: "tyh-" });
  const daemon = await startDaemon({
    listen: { transport: "tcp", hostname: "127.0.0.1", port: 0 },
    pluginsDir: dir,
    spoolDir: `${dir}/spool`,
    load: (d) => Promise.resolve({ dir: d, plugins: [], warnings: [] }),
    watch: false,
    conns: { maxConns: 1, headersTimeoutMs: 300, idleTimeoutMs: 60_000 },
  });
  const conns: Deno.Conn[] = [];
  try {
    const port = daemon.address.transport === "tcp" ? daemon.address.port : 0;
    for (let i = 0; i < 2; i++) conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    // Both end without a byte: the second at once (past maxConns), the first at 300 ms; with the
    // defaults (256 connections, 10 s for headers) neither would end within the 5 s bound.
    for (const conn of conns) {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const bound = new Promise<string>((r) => timer = setTimeout(() => r("still open"), 5000));
      const read = conn.read(new Uint8Array(16)).then((n) => n ?? "closed", () => "closed");
      const ended = await Promise.race([read, bound]);
      clearTimeout(timer);
      assert.equal(ended, "closed");
      if (ended !== "closed") conn.close();
    }
  } finally {
    for (const conn of conns) conn.close();
    await daemon.stop();
    await Deno.remove(dir, { recursive: true });
  }
});
