import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTree, tempDir } from "../_cli.ts";
import { alive } from "../_procs.ts";
import { serveOn } from "./_serve.ts";

async function pidsIn(dir: string): Promise<number[]> {
  const pids: number[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const text = await Deno.readTextFile(join(dir, entry.name));
    if (/^\d+\s*$/.test(text)) pids.push(Number(text));
  }
  return pids;
}

Deno.test("serve: SIGTERM under load answers consulted calls in flight, leaves nothing running, removes the socket, exits 0", async () => {
  const out = await tempDir({ prefix: "tyhooks-pids-" });
  const plugins = await makeTree({
    "r/plugin.yaml": "name: r\nhooks:\n  task.route: route.sh\n  task.done: done.sh\n",
    // A router that takes a while: calls are in flight when SIGTERM comes.
    "r/route.sh": '#!/bin/sh\necho $$ > "$OUT/route-$$"\nsleep 0.4\necho CLAUDE_CONFIG_DIR=/x\n',
    // An event hook that would run for a minute, with a child in its group.
    "r/done.sh":
      '#!/bin/sh\necho $$ > "$OUT/done-$$"\nsleep 60 &\necho $! > "$OUT/child-$$"\nwait\n',
  });
  // Event hooks get --stop-timeout to finish: these never would.
  await using d = await serveOn(plugins, ["--stop-timeout", "500ms"], { env: { OUT: out } });
  const socket = d.socket!;
  const routes = Array.from(
    { length: 20 },
    () =>
      d.call("POST", "/v1/route", { task: { id: 1 } }).then(
        (a) => a,
        (error: Error) => error,
      ),
  );
  const events = Array.from(
    { length: 5 },
    (_, i) =>
      d.call("POST", `/v1/events/task.done${i % 2 ? "?wait=1" : ""}`, {}).then(
        (a) => a,
        (error: Error) => error,
      ),
  );
  // Let the routers and event hooks start, then stop the daemon under them.
  const deadline = Date.now() + 5000;
  while ((await pidsIn(out)).length < 10 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  const started = performance.now();
  const { code, stderr } = await d.stop("SIGTERM");
  const stopMs = performance.now() - started;
  assert.equal(code, 0, stderr);
  // Route calls have a 15 s deadline; this one answers in 0.4 s, and events are cut short.
  assert.ok(stopMs < 5000, `stopping took ${stopMs} ms`);

  let answered = 0;
  for (const result of await Promise.all(routes)) {
    if (result instanceof Error) continue; // Sent after the daemon stopped accepting.
    assert.equal(result.status, 200, JSON.stringify(result.body));
    assert.equal(result.body.claude_config_dir, "/x");
    answered++;
  }
  assert.ok(answered > 0, "no consulted call in flight was answered");
  for (const result of await Promise.all(events)) {
    if (result instanceof Error) continue;
    assert.ok([200, 202, 503].includes(result.status), JSON.stringify(result.body));
  }

  await assert.rejects(Deno.lstat(socket), Deno.errors.NotFound);
  const pids = await pidsIn(out);
  assert.ok(pids.length >= 10);
  for (const pid of pids) assert.ok(!alive(pid), `process ${pid} is still running`);
  assert.match(stderr, /Stopped/);
});
