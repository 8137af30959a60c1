import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { makeTree } from "../_cli.ts";

const SCRIPT = "#!/bin/sh\nexit 0\n";

function plugin(name: string): Record<string, string> {
  return {
    "plugin.yaml": `name: ${name}\nhooks:\n  task.done: on-done.sh\n`,
    "on-done.sh": SCRIPT,
  };
}

function under(dir: string, files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([path, text]) => [`${dir}/${path}`, text]));
}

Deno.test("loadPlugins() sorts plugins by name, not by folder", async () => {
  const root = await makeTree({
    ...under("a-folder", plugin("zulu")),
    ...under("b-folder", plugin("alpha")),
    ...under("c-folder", plugin("mike")),
  });
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins.map((p) => p.name), ["alpha", "mike", "zulu"]);
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() finds no plugins and no warnings in a missing dir", async () => {
  const root = await makeTree({});
  const index = await loadPlugins(join(root, "does-not-exist"));
  assert.deepEqual(index.plugins, []);
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() silently ignores a folder without a manifest", async () => {
  const root = await makeTree({ ...under("x", plugin("x")), "notes/readme.md": "hello\n" });
  const index = await loadPlugins(root);
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() finds plugins in nested collections down to depth 5 as ty does, not deeper", async () => {
  const root = await makeTree({
    ...under("one", plugin("depth-1")),
    ...under("c1/two", plugin("depth-2")),
    ...under("c1/c2/c3/four", plugin("depth-4")),
    ...under("c1/c2/c3/c4/five", plugin("depth-5")),
    ...under("c1/c2/c3/c4/c5/six", plugin("depth-6")),
  });
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins.map((p) => p.name), ["depth-1", "depth-2", "depth-4", "depth-5"]);
  assert.deepEqual(index.plugins[3].dir, join(root, "c1/c2/c3/c4/five"));
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() does not descend into a plugin", async () => {
  const root = await makeTree({
    ...under("outer", plugin("outer")),
    ...under("outer/inner", plugin("inner")),
  });
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins.map((p) => p.name), ["outer"]);
});

Deno.test("loadPlugins() skips .git folders, and only those, as ty's collections need", async () => {
  const root = await makeTree({
    ...under(".hidden", plugin("hidden")),
    ...under(".git/p", plugin("in-git")),
    ...under("team/.git", plugin("git-itself")),
    ...under("seen", plugin("seen")),
  });
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins.map((p) => p.name), ["hidden", "seen"]);
});

Deno.test("loadPlugins() skips the later of two plugins with the same name and says where the first is", async () => {
  const root = await makeTree({
    ...under("a", plugin("twin")),
    ...under("b/twin", plugin("twin")),
  });
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins.map((p) => p.dir), [join(root, "a")]);
  assert.deepEqual(index.warnings.length, 1);
  assert.deepEqual(index.warnings[0].path, join(root, "b/twin/plugin.yaml"));
  assert.deepEqual(index.warnings[0].plugin, "twin");
  assert.deepEqual(
    index.warnings[0].message,
    'Skipped plugin "twin" in "b/twin": the name is already used by the plugin in "a"',
  );
  assert.deepEqual([index.warnings[0].line, index.warnings[0].column], [1, 7]);
});

Deno.test("loadPlugins() follows a symlink to a plugin folder", async () => {
  const source = await makeTree(plugin("linked"));
  const root = await makeTree({});
  await Deno.symlink(source, join(root, "linked"));
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins.map((p) => p.name), ["linked"]);
  assert.deepEqual(index.plugins[0].hooks["task.done"], join(root, "linked", "on-done.sh"));
});
