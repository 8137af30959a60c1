/** Plugins ty loads load in tyhooks too; `plugins validate` says what is risky. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { validatePlugins } from "../../lib/plugins/validate.ts";
import { makeTree, NOOP_SCRIPT, withTree } from "../_cli.ts";
import { loadTree, located } from "../_index.ts";

Deno.test("a collection's plugins share ../shared scripts: they load, and validate reports each", async () => {
  await withTree({
    "team/shared/notify.sh": NOOP_SCRIPT,
    "team/a/plugin.yaml": "name: a\nhooks:\n  task.done: ../shared/notify.sh\n",
    "team/b/plugin.yaml":
      "name: b\nactions:\n  - id: ping\n    command: ../shared/notify.sh\nhooks:\n  task.failed: ../shared/notify.sh\n",
  }, async (root) => {
    const shared = join(root, "team", "shared", "notify.sh");
    const index = await loadPlugins(root);
    assert.deepEqual(index.warnings, []);
    assert.deepEqual(index.plugins.map((p) => [p.name, p.hooks, p.actions.map((a) => a.command)]), [
      ["a", { "task.done": shared }, []],
      ["b", { "task.failed": shared }, [shared]],
    ]);
    const result = await validatePlugins(root);
    const tail = `resolves outside the plugin dir (to ${JSON.stringify(shared)}), ` +
      "so it does not travel with the plugin";
    assert.deepEqual(located(result.problems), [
      `3:14 Hook "task.done": script "../shared/notify.sh" ${tail}`,
      `4:14 Action "ping": script "../shared/notify.sh" ${tail}`,
      `6:16 Hook "task.failed": script "../shared/notify.sh" ${tail}`,
    ]);
  });
});

Deno.test("a script symlinked from outside loads, and validate reports where it leads", async () => {
  const outside = await makeTree({ "tool.sh": NOOP_SCRIPT });
  try {
    await withTree({ "p/plugin.yaml": "name: p\nhooks:\n  task.done: tool.sh\n" }, async (root) => {
      await Deno.symlink(join(outside, "tool.sh"), join(root, "p", "tool.sh"));
      const index = await loadPlugins(root);
      assert.deepEqual(index.warnings, []);
      assert.equal(index.plugins[0].hooks["task.done"], join(root, "p", "tool.sh"));
      const { problems } = await validatePlugins(root);
      assert.equal(problems.length, 1);
      assert.match(problems[0].message, /^Hook "task.done": script "tool.sh" resolves outside/);
      assert.ok(problems[0].message.includes(await Deno.realPath(join(outside, "tool.sh"))));
    });
  } finally {
    await Deno.remove(outside, { recursive: true });
  }
});

Deno.test("a service with a cwd outside its folder and an env entry without = is kept, as ty keeps it", async () => {
  const { index, root } = await loadTree({
    "data/.keep": "",
    "p/plugin.yaml": [
      "name: p",
      "services:",
      "  - name: index",
      "    command: ./server",
      "    cwd: ../data",
      '    env: ["PORT=7700", "VERBOSE", "MODE=x"]',
      "",
    ].join("\n"),
  });
  assert.deepEqual(index.plugins[0].services, [{
    name: "index",
    command: "./server",
    cwd: join(root, "data"),
    env: ["PORT=7700", "MODE=x"],
    restart: "on-failure",
  }]);
  assert.deepEqual(located(index.warnings), [
    '6:24 Skipped env entry "VERBOSE" of service "index": it is not KEY=VALUE',
  ]);
  const { problems } = await validatePlugins(root);
  assert.deepEqual(located(problems).map((l) => l.replace(/\(to .*\)/, "(to …)")), [
    '5:10 Service "index": cwd "../data" resolves outside the plugin dir (to …), ' +
    "so it does not travel with the plugin",
    '6:24 Skipped env entry "VERBOSE" of service "index": it is not KEY=VALUE',
  ]);
});

Deno.test("YAML merge keys work as in ty's yaml.v3", async () => {
  const { index, root } = await loadTree({
    "m/sync.sh": NOOP_SCRIPT,
    "m/plugin.yaml": [
      "name: m",
      "x-base: &base",
      "  command: sync.sh",
      "  label: Sync",
      "actions:",
      "  - <<: *base",
      "    id: sync",
      "",
    ].join("\n"),
  });
  assert.deepEqual(index.warnings, []);
  assert.deepEqual(index.plugins[0].actions, [
    { id: "sync", label: "Sync", command: join(root, "m", "sync.sh") },
  ]);
});

Deno.test("only the first YAML document is read, and validate warns about the rest", async () => {
  const { index, root } = await loadTree({
    "d/a.sh": NOOP_SCRIPT,
    "d/plugin.yaml": "name: first\nhooks:\n  task.done: a.sh\n---\nname: second\n---\n: [\n",
  });
  assert.deepEqual(index.warnings, []);
  assert.deepEqual(index.plugins.map((p) => p.name), ["first"]);
  const { problems } = await validatePlugins(root);
  assert.deepEqual(located(problems), [
    "4:1 plugin.yaml holds 2 more YAML documents after the first, which are not read (as in ty)",
  ]);
});
