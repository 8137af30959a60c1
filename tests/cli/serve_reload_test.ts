import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTree, writeTree } from "../_cli.ts";
import { serveOn, type ServeProcess } from "./_serve.ts";
import { pluginFiles, pluginsHandling } from "./_trees.ts";

const ROUTER = (dir: string) => `#!/bin/sh\necho CLAUDE_CONFIG_DIR=${dir}\n`;

/** Asks `/v1/route` until `ok(answer)` or `ms` pass; returns the last answer. */
async function routeUntil(
  d: ServeProcess,
  ok: (body: Record<string, unknown>) => boolean,
  ms = 5000,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + ms;
  let body: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    body = (await d.call("POST", "/v1/route", { task: { id: 1 } })).body;
    if (ok(body)) return body;
    await new Promise((r) => setTimeout(r, 50));
  }
  return body;
}

Deno.test("serve: editing a router script changes the next answer, no restart", async () => {
  const plugins = await pluginsHandling("task.route", { r: ROUTER("/one") });
  await using d = await serveOn(plugins);
  assert.equal((await d.call("POST", "/v1/route", {})).body.claude_config_dir, "/one");
  await Deno.writeTextFile(join(plugins, "r/hook.sh"), ROUTER("/two"));
  assert.equal((await d.call("POST", "/v1/route", {})).body.claude_config_dir, "/two");
});

Deno.test("serve: editing a manifest while the daemon runs changes the answers (watch reload)", async () => {
  const plugins = await pluginsHandling("task.done", { r: ROUTER("/from-r") });
  await using d = await serveOn(plugins);
  assert.equal((await d.call("POST", "/v1/route", {})).body.plugin, "");
  await Deno.writeTextFile(
    join(plugins, "r/plugin.yaml"),
    "name: r\nhooks:\n  task.route: hook.sh\n",
  );
  const after = await routeUntil(d, (b) => b.plugin === "r");
  assert.deepEqual(after, { plugin: "r", claude_config_dir: "/from-r", hold: false, reason: "" });
  // A new plugin dir appearing is picked up too.
  await writeTree(plugins, pluginFiles("a", "task.route", ROUTER("/from-a")));
  assert.equal((await routeUntil(d, (b) => b.plugin === "a")).plugin, "a");
  assert.match(d.stderr(), /Reloaded the plugins/);
});

Deno.test("serve: a manifest broken while running drops that plugin only, and the warning is logged", async () => {
  const plugins = await makeTree({
    "a/plugin.yaml": "name: a\nhooks:\n  task.route: route.sh\n",
    "a/route.sh": ROUTER("/from-a"),
    "b/plugin.yaml": "name: b\nhooks:\n  task.done: done.sh\n",
    "b/done.sh": "#!/bin/sh\n",
  });
  await using d = await serveOn(plugins);
  assert.equal((await d.call("GET", "/v1/health")).body.plugins, 2);
  await Deno.writeTextFile(join(plugins, "b/plugin.yaml"), "name: b\nhooks: [unclosed\n");
  const deadline = Date.now() + 5000;
  let list = (await d.call("GET", "/v1/plugins")).body;
  while (list.plugins.length !== 1 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
    list = (await d.call("GET", "/v1/plugins")).body;
  }
  assert.deepEqual(list.plugins.map((p: { name: string }) => p.name), ["a"]);
  assert.equal(list.warnings.length, 1);
  assert.match(list.warnings[0].path, /b\/plugin\.yaml$/);
  assert.equal((await d.call("POST", "/v1/route", {})).body.claude_config_dir, "/from-a");
  assert.match(d.stderr(), /warn: .*b\/plugin\.yaml/);
});

Deno.test("serve: SIGHUP reloads the plugins, and the daemon keeps running", async () => {
  const plugins = await makeTree({ "x/README": "not a plugin\n" });
  await using d = await serveOn(plugins);
  await writeTree(plugins, {
    "r/plugin.yaml": "name: r\nhooks:\n  task.route: route.sh\n",
    "r/route.sh": ROUTER("/hup"),
  });
  Deno.kill(d.pid, "SIGHUP");
  const body = await routeUntil(d, (b) => b.plugin === "r");
  assert.equal(body.claude_config_dir, "/hup");
  const deadline = Date.now() + 5000;
  while (!/Reloaded the plugins \(reason=SIGHUP/.test(d.stderr()) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(d.stderr(), /Reloaded the plugins \(reason=SIGHUP plugins=1/);
  assert.equal((await d.call("GET", "/v1/health")).status, 200);
});

Deno.test("serve: a call in flight keeps the plugins it started with across a reload", async () => {
  const plugins = await makeTree({
    // Asked first, takes a while, decides nothing: the call is in flight during the reload.
    "a/plugin.yaml": "name: a\nhooks:\n  task.route: route.sh\n",
    "a/route.sh": "#!/bin/sh\nsleep 1\n",
    "b/plugin.yaml": "name: b\nhooks:\n  task.route: route.sh\n",
    "b/route.sh": ROUTER("/from-b"),
  });
  await using d = await serveOn(plugins);
  const inFlight = d.call("POST", "/v1/route", {});
  await new Promise((r) => setTimeout(r, 200));
  // "b" stops handling task.route; its script stays where it was.
  await Deno.writeTextFile(
    join(plugins, "b/plugin.yaml"),
    "name: b\nhooks:\n  task.done: route.sh\n",
  );
  Deno.kill(d.pid, "SIGHUP");
  const routes = async () =>
    (await d.call("GET", "/v1/plugins")).body.plugins.filter((p: { hooks: object }) =>
      "task.route" in p.hooks
    ).length;
  const deadline = Date.now() + 5000;
  while ((await routes()) !== 1 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.equal(await routes(), 1);
  // The reloaded index has no "b" router, but the call that started before still asks it.
  assert.equal((await inFlight).body.plugin, "b");
});

Deno.test("serve: a hook writing into its own plugin dir causes no reload; editing its manifest does", async () => {
  const plugins = await pluginsHandling("task.done", {
    // Run from its plugin dir: a log beside it, and a dir of its own.
    logger: "#!/bin/sh\necho done >> done.log\nmkdir -p state && date > state/last\n",
  });
  await using d = await serveOn(plugins);
  for (let i = 0; i < 3; i++) {
    const fired = await d.call("POST", "/v1/events/task.done?wait=1", { task: { id: i } });
    assert.equal(fired.body.runs[0].exit_code, 0, JSON.stringify(fired.body));
  }
  assert.equal((await Deno.readTextFile(join(plugins, "logger/done.log"))).split("\n").length, 4);
  // Five times the debounce, and a reload is logged at info.
  await new Promise((r) => setTimeout(r, 1000));
  assert.doesNotMatch(d.stderr(), /Reloaded the plugins/);
  await Deno.writeTextFile(
    join(plugins, "logger/plugin.yaml"),
    "name: logger\nhooks:\n  task.done: hook.sh\n  task.failed: hook.sh\n",
  );
  const deadline = Date.now() + 5000;
  while (!/Reloaded the plugins/.test(d.stderr()) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 20));
  }
  assert.match(d.stderr(), /Reloaded the plugins \(reason=change plugins=1/);
});
