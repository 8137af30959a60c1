import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTree, spawnCli, tempDir } from "../_cli.ts";
import { alive, readPid, waitGone } from "../_procs.ts";
import { serveOn, tempSocket } from "./_serve.ts";
import { within } from "../../lib/async.ts";

/** A plugins dir holding plugin `plugin`, whose one service `name` runs `command`. */
function servicePlugins(plugin: string, name: string, command: string): Promise<string> {
  return makeTree({
    [`${plugin}/plugin.yaml`]:
      `name: ${plugin}\nservices:\n  - name: ${name}\n    command: ${command}\n`,
  });
}

Deno.test("serve --services supervises the services, lists them at /v1/services, stops them on SIGTERM", async () => {
  const out = await tempDir({ prefix: "tyhooks-svc-" });
  const plugins = await servicePlugins("indexer", "web", 'echo $$ > "$OUT/web.pid"; exec sleep 60');
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

Deno.test("serve --services relays a service's clipboard write and screen clear escaped, never raw", async () => {
  const out = await tempDir({ prefix: "tyhooks-svc-" });
  const plugins = await servicePlugins(
    "evil",
    "out",
    "printf 'A\\033]52;c;aGk=\\007\\033[2J\\n'; echo $$ > \"$OUT/pid\"; exec sleep 60",
  );
  await using d = await serveOn(plugins, ["--services"], { env: { OUT: out } });
  await readPid(join(out, "pid"), 5000);
  const { code, stderr } = await d.stop("SIGTERM");
  assert.equal(code, 0, stderr);
  assert.ok(!["\x07", "\x1b"].some((c) => stderr.includes(c)), JSON.stringify(stderr));
  assert.match(stderr, /^\[evil\/out\] A\\x1b\]52;c;aGk=\\x07\\x1b\[2J$/m);
});

Deno.test("serve --services whose stderr nobody reads stops on SIGTERM within the services' stop timeout + 1 s", async () => {
  // About 3 MB relayed: far more than the pipe and the writer's bound hold.
  const plugins = await servicePlugins(
    "chatty",
    "talk",
    "seq 1 200000; touch printed; exec sleep 60",
  );
  const child = spawnCli(
    ["serve", "--listen", `unix:${await tempSocket()}`, "--plugins-dir", plugins, "--services"],
    { stdout: "null" },
  );
  try {
    // Printed, or held back by the stalled stderr after 10 s.
    const printed = join(plugins, "chatty", "printed");
    for (let i = 0; i < 500; i++) {
      if (await Deno.stat(printed).then(() => true, () => false)) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    const sent = performance.now();
    child.kill("SIGTERM");
    // The bound is 5 s + 1 s; 2 s more for a loaded machine, and past 15 s it is stuck.
    const exited = await within(child.status, 15_000);
    const elapsed = performance.now() - sent;
    assert.ok(exited, "still running 15 s after SIGTERM");
    assert.equal((await child.status).code, 0);
    assert.ok(elapsed < 8000, `exited ${Math.round(elapsed)} ms after SIGTERM`);
  } finally {
    if (!await within(child.status, 0)) child.kill("SIGKILL");
    await child.stderr.cancel();
    await child.status;
  }
});
