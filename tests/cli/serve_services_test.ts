import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTree, tempDir } from "../_cli.ts";
import { alive, readPid, waitGone } from "../_procs.ts";
import { serveOn } from "./_serve.ts";

Deno.test("serve --services supervises the services, lists them at /v1/services, stops them on SIGTERM", async () => {
  const out = await tempDir({ prefix: "tyhooks-svc-" });
  const plugins = await makeTree({
    "indexer/plugin.yaml": [
      "name: indexer",
      "services:",
      "  - name: web",
      '    command: echo $$ > "$OUT/web.pid"; exec sleep 60',
      "",
    ].join("\n"),
  });
  await using d = await serveOn(plugins, ["--services"], { env: { OUT: out } });
  const pid = await readPid(join(out, "web.pid"), 5000);
  const deadline = Date.now() + 5000;
  let list = (await d.call("GET", "/v1/services")).body;
  while (list.services[0]?.state !== "running" && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    list = (await d.call("GET", "/v1/services")).body;
  }
  assert.equal(list.services.length, 1);
  const [service] = list.services;
  assert.deepEqual(Object.keys(service).sort(), [
    "last_exit",
    "name",
    "pid",
    "plugin",
    "restarts",
    "state",
  ]);
  assert.equal(service.plugin, "indexer");
  assert.equal(service.name, "web");
  assert.equal(service.state, "running");
  assert.equal(service.pid, pid);
  assert.equal(service.restarts, 0);
  assert.ok(alive(pid));
  const { code, stderr } = await d.stop("SIGTERM");
  assert.equal(code, 0, stderr);
  assert.ok(await waitGone(pid, 1000), `service ${pid} still running`);
});
