import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTree, shScript, tempDir } from "../_cli.ts";
import { serveOn } from "./_serve.ts";
import { waitForFile } from "../_procs.ts";

// TYHOOKS_SERVE_PUBLIC=1 makes the daemon serve through Deno.serve, as it does on a Deno without
// the per-connection server: the endpoints answer as always, and the start log says which
// connection limits no longer hold.

async function publicDaemon(args: string[] = []) {
  const out = await tempDir({ prefix: "tyhooks-out-" });
  const plugins = await makeTree({
    "router/plugin.yaml": "name: router\nhooks:\n  task.route: route.sh\n",
    "router/route.sh": '#!/bin/sh\necho "CLAUDE_CONFIG_DIR=/profiles/$TASK_PROJECT"\n',
    "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: pre.sh\n",
    // A "slow" tool call holds its request until $OUT/go exists.
    "guard/pre.sh": shScript(
      "call=$(cat)",
      'case $call in *slow*) touch "$OUT/slow"; while [ ! -e "$OUT/go" ]; do sleep 0.05; done ;; esac',
      'case $call in *"rm -rf"*) echo "no rm" >&2; exit 2 ;; esac',
      'echo \'{"action":"allow","reason":"fine"}\'',
      "",
    ),
    "notifier/plugin.yaml": "name: notifier\nhooks:\n  task.done: done.sh\n",
    "notifier/done.sh": '#!/bin/sh\necho "$TASK_ID" > "$OUT/done"\n',
  });
  const daemon = await serveOn(plugins, args, { env: { OUT: out, TYHOOKS_SERVE_PUBLIC: "1" } });
  return { daemon, out };
}

Deno.test("serve on Deno.serve answers health, route, tool pre, events and 413, and logs what it does not enforce", async () => {
  const { daemon: d, out } = await publicDaemon();
  await using _ = d;
  assert.match(
    d.stderr(),
    /Serving through Deno\.serve \(TYHOOKS_SERVE_PUBLIC=1\): --max-conns bounds requests in flight, not connections, and slow or idle clients are not timed out/,
  );
  const health = await d.call("GET", "/v1/health");
  assert.equal(health.status, 200);
  assert.equal(health.body.plugins, 3);
  const route = await d.call("POST", "/v1/route", { task: { id: 1, project: "web" } });
  assert.equal(route.status, 200);
  assert.equal(route.body.claude_config_dir, "/profiles/web");
  const allow = await d.call("POST", "/v1/tool/pre", { tool: "bash", args: { command: "ls" } });
  assert.deepEqual(allow.body, { action: "allow", reason: "fine" });
  const block = await d.call("POST", "/v1/tool/pre", {
    tool: "bash",
    args: { command: "rm -rf /" },
  });
  assert.deepEqual(block.body, { action: "block", reason: "no rm" });
  const event = await d.call("POST", "/v1/events/task.done", { task: { id: 5 } });
  assert.equal(event.status, 202);
  // The shell creates the file before echo writes to it: wait for the line, not the file.
  assert.equal(await waitForFile(join(out, "done"), { ms: 10_000 }), "5\n");
  const big = JSON.stringify({ task: { id: 1, body: "x".repeat(1024 * 1024) } });
  const tooBig = await d.call("POST", "/v1/route", big);
  assert.equal(tooBig.status, 413);
  const stopped = await d.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
});

Deno.test("serve on Deno.serve answers 503 past --max-conns requests in flight, and 505 without Host", async () => {
  const { daemon: d, out } = await publicDaemon(["--max-conns", "1"]);
  await using _ = d;
  const slow = d.call("POST", "/v1/tool/pre", { tool: "slow", args: {} });
  await waitForFile(join(out, "slow"), { ms: 10_000, ready: () => true });
  const refused = await d.call("GET", "/v1/health");
  assert.equal(refused.status, 503);
  assert.match(refused.body.error, /^Too many requests at once: 1 are being answered$/);
  await Deno.writeTextFile(join(out, "go"), "");
  assert.equal((await slow).status, 200);
  assert.equal((await d.call("GET", "/v1/health")).status, 200);

  const conn = await Deno.connect({ transport: "unix", path: d.socket! });
  try {
    await conn.write(new TextEncoder().encode("GET /v1/health HTTP/1.0\r\n\r\n"));
    const buffer = new Uint8Array(4096);
    const n = await conn.read(buffer);
    assert.match(new TextDecoder().decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.[01] 505 /);
  } finally {
    conn.close();
  }
  const stopped = await d.stop();
  assert.equal(stopped.code, 0, stopped.stderr);
});
