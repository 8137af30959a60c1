import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPluginsCached } from "../../lib/plugins/cache.ts";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { cli, makeTree, tempDir, writeTree } from "../_cli.ts";
import { settled } from "../_index.ts";

const ROUTER = {
  "r/plugin.yaml": "name: r\nhooks:\n  task.route: route.sh\n",
  "r/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/profiles/a\n",
};

async function warm(files: Record<string, string>) {
  const dir = await makeTree(files);
  await settled();
  const cacheDir = await tempDir();
  const first = await loadPluginsCached(dir, { cacheDir });
  assert.equal(first.hit, false);
  assert.equal((await loadPluginsCached(dir, { cacheDir })).hit, true);
  return { dir, cacheDir, reload: () => loadPluginsCached(dir, { cacheDir }) };
}

Deno.test("loadPluginsCached() returns exactly what loadPlugins() returns, from the cache the second time", async () => {
  const { dir, reload } = await warm({ ...ROUTER, "bad/plugin.yaml": "name: [" });
  const cached = await reload();
  assert.equal(cached.hit, true);
  assert.deepEqual(cached.index, await loadPlugins(dir));
});

Deno.test("loadPluginsCached() reloads when a manifest is edited", async () => {
  const { dir, reload } = await warm(ROUTER);
  await Deno.writeTextFile(
    join(dir, "r/plugin.yaml"),
    "name: renamed\nhooks:\n  task.route: route.sh\n",
  );
  const after = await reload();
  assert.equal(after.hit, false);
  assert.equal(after.index.plugins[0].name, "renamed");
});

Deno.test("loadPluginsCached() reloads when a plugin is added inside a collection", async () => {
  const { dir, reload } = await warm({
    ...ROUTER,
    "team/a/plugin.yaml": "name: a\nhooks:\n  task.done: d.sh\n",
    "team/a/d.sh": "#!/bin/sh\n",
  });
  await writeTree(dir, {
    "team/b/plugin.yaml": "name: b\nhooks:\n  task.done: d.sh\n",
    "team/b/d.sh": "#!/bin/sh\n",
  });
  const after = await reload();
  assert.equal(after.hit, false);
  assert.deepEqual(after.index.plugins.map((p) => p.name), ["a", "b", "r"]);
});

Deno.test("loadPluginsCached() reloads when a script loses its exec bit", async () => {
  const { dir, reload } = await warm(ROUTER);
  await Deno.chmod(join(dir, "r/route.sh"), 0o644);
  const after = await reload();
  assert.equal(after.hit, false);
  assert.equal(after.index.plugins.length, 0);
});

Deno.test("loadPluginsCached() reloads when a missing script appears, in a folder there or missing", async () => {
  // The folder of the missing script: there (bin/keep), or missing itself.
  for (const folder of [{ "p/bin/keep": "" }, {}] as Record<string, string>[]) {
    const { dir, reload } = await warm({
      "p/plugin.yaml": "name: p\nhooks:\n  task.done: bin/done.sh\n  task.failed: f.sh\n",
      "p/f.sh": "#!/bin/sh\n",
      ...folder,
    });
    await writeTree(dir, { "p/bin/done.sh": "#!/bin/sh\n" });
    const after = await reload();
    assert.equal(after.hit, false, JSON.stringify(folder));
    assert.deepEqual(Object.keys(after.index.plugins[0].hooks).sort(), [
      "task.done",
      "task.failed",
    ]);
  }
});

Deno.test("loadPluginsCached() reloads when a plugin gains a workflows or routines folder", async () => {
  const { dir, reload } = await warm(ROUTER);
  await writeTree(dir, { "r/workflows/deploy.yaml": "steps: []\n" });
  const workflow = await reload();
  assert.equal(workflow.hit, false);
  assert.deepEqual(workflow.index.plugins[0].workflows, ["deploy"]);
  await settled(); // Cached again once settled.
  await reload();
  assert.equal((await reload()).hit, true);
  await writeTree(dir, { "r/routines/daily/prompt.md": "Check.\n" });
  const routine = await reload();
  assert.equal(routine.hit, false);
  assert.deepEqual(routine.index.plugins[0].routines, ["daily"]);
});

Deno.test("loadPluginsCached() reloads when a script symlink is pointed elsewhere", async () => {
  const { dir, reload } = await warm({
    ...ROUTER,
    "r/real.sh": "#!/bin/sh\n",
    "r/other.sh": "#!/bin/sh\n",
  });
  await Deno.remove(join(dir, "r/route.sh"));
  await Deno.symlink("/bin/sh", join(dir, "r/route.sh"));
  const after = await reload();
  assert.equal(after.hit, false);
  // A link out of the plugin dir loads, as in ty; the cache follows the new target.
  assert.equal(after.index.plugins[0].hooks["task.route"], join(dir, "r/route.sh"));
});

Deno.test("loadPluginsCached() ignores a corrupt cache file and an unwritable cache dir", async () => {
  const { dir, cacheDir, reload } = await warm(ROUTER);
  for (const entry of Deno.readDirSync(cacheDir)) {
    await Deno.writeTextFile(join(cacheDir, entry.name), "{not json");
  }
  assert.equal((await reload()).hit, false);
  const readOnly = join(await tempDir(), "file-not-dir");
  await Deno.writeTextFile(readOnly, "");
  const loaded = await loadPluginsCached(dir, { cacheDir: readOnly });
  assert.equal(loaded.index.plugins[0].name, "r");
});

Deno.test("a warm tyhooks route loads neither yaml nor zod (it runs with npm disabled)", async () => {
  // An anchor is left to the yaml package (manifests without one are read without it).
  const dir = await makeTree({
    ...ROUTER,
    "r/plugin.yaml": "name: r\nhooks: &hooks\n  task.route: route.sh\n",
  });
  await settled();
  const env = { XDG_CACHE_HOME: await tempDir() };
  const args = [
    "route",
    "--plugins-dir",
    dir,
    "--task-json",
    '{"id": 3, "title": "t", "unknown": [1]}',
  ];
  // Control: a cold call needs yaml, so with npm disabled it fails; the check below can fail.
  const control = await cli(args, {
    env: { XDG_CACHE_HOME: await tempDir() },
    denoFlags: ["--no-npm"],
  });
  assert.notEqual(control.code, 0);
  const cold = await cli(args, { env });
  assert.equal(cold.code, 0, cold.stderr);
  // --no-npm makes any import of an npm package fail: the warm path must not need one.
  const warmRun = await cli(args, { env, denoFlags: ["--no-npm"] });
  assert.equal(warmRun.code, 0, warmRun.stderr);
  assert.equal(warmRun.stdout, cold.stdout);
  assert.match(warmRun.stdout, /CLAUDE_CONFIG_DIR=\/profiles\/a/);
});

Deno.test("warm tyhooks place and tool pre with answering handlers run with npm disabled", async () => {
  const dir = await makeTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.placement: place.sh\n  pre_tool_call: guard.sh\n",
    "p/place.sh": '#!/bin/sh\necho \'{"target":"gpu-1","workdir":"~/w","reason":"free"}\'\n',
    "p/guard.sh": '#!/bin/sh\necho \'{"action":"block","reason":"no"}\'\n',
  });
  await settled();
  const env = { XDG_CACHE_HOME: await tempDir() };
  const place = ["place", "--plugins-dir", dir, "--task-json", '{"id": 1}'];
  const pre = ["tool", "pre", "--tool", "bash", "--args", '{"command":"ls"}', "--plugins-dir", dir];
  assert.equal((await cli(place, { env })).code, 0);
  const placed = await cli(place, { env, denoFlags: ["--no-npm"] });
  assert.equal(placed.code, 0, placed.stderr);
  assert.equal(JSON.parse(placed.stdout).target, "gpu-1");
  const blocked = await cli(pre, { env, denoFlags: ["--no-npm"] });
  assert.equal(blocked.code, 2, blocked.stderr);
  assert.deepEqual(JSON.parse(blocked.stdout), { action: "block", reason: "no" });
});

Deno.test("loadPluginsCached() keeps the warning of a link that leads nowhere, and reloads once its target appears", async () => {
  const dir = await makeTree(ROUTER);
  const target = join(await tempDir(), "guard");
  await Deno.symlink(target, join(dir, "guard"));
  await settled();
  const cacheDir = await tempDir();
  const cold = await loadPluginsCached(dir, { cacheDir });
  const cached = await loadPluginsCached(dir, { cacheDir });
  assert.equal(cached.hit, true);
  assert.deepEqual(cached.index, cold.index);
  assert.match(
    cached.index.warnings[0]?.message ?? "",
    /"guard": it is a link to .* leads nowhere/,
  );
  await writeTree(target, {
    "plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: g.sh\n",
    "g.sh": "#!/bin/sh\n",
  });
  const after = await loadPluginsCached(dir, { cacheDir });
  assert.equal(after.hit, false);
  assert.deepEqual(after.index.plugins.map((p) => p.name), ["guard", "r"]);
  assert.deepEqual(after.index.warnings, []);
});
