import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";

const SCRIPT = "#!/bin/sh\nexit 0\n";

Deno.test("plugins remove deletes a plugin inside a collection, and only its folder", async () => {
  const root = await makeTree({
    "team/one/plugin.yaml": "name: one\nhooks:\n  task.done: a.sh\n",
    "team/one/a.sh": SCRIPT,
    "team/two/plugin.yaml": "name: two\nhooks:\n  task.done: a.sh\n",
    "team/two/a.sh": SCRIPT,
    "team/notes.md": "keep me\n",
  });
  const result = await cli(["plugins", "remove", "one", "--plugins-dir", root]);
  assert.deepEqual(result, {
    code: 0,
    stdout: `Removed "one" from ${JSON.stringify(join(root, "team/one"))}\n`,
    stderr: "",
  });
  assert.deepEqual([...Deno.readDirSync(join(root, "team"))].map((e) => e.name).sort(), [
    "notes.md",
    "two",
  ]);
});

Deno.test("plugins remove finds the plugin by its name, not its folder", async () => {
  const root = await makeTree({
    "folder/plugin.yaml": "name: real-name\n",
    "folder/routines/r/prompt.md": "x\n",
  });
  const byFolder = await cli(["plugins", "remove", "folder", "--plugins-dir", root]);
  assert.equal(byFolder.code, 1);
  const byName = await cli(["plugins", "remove", "real-name", "--plugins-dir", root]);
  assert.equal(byName.code, 0);
  assert.deepEqual([...Deno.readDirSync(root)], []);
});

Deno.test("plugins remove of an unknown name fails with exit 1 and touches nothing", async () => {
  const root = await makeTree({
    "one/plugin.yaml": "name: one\nhooks:\n  task.done: a.sh\n",
    "one/a.sh": SCRIPT,
  });
  const result = await cli(["plugins", "remove", "nope", "--plugins-dir", root]);
  assert.deepEqual(result, {
    code: 1,
    stdout: "",
    stderr: `tyhooks: No plugin named "nope" in ${
      JSON.stringify(root)
    }: see "tyhooks plugins list"\n`,
  });
  assert.ok((await Deno.stat(join(root, "one/plugin.yaml"))).isFile);
});

Deno.test("plugins remove of a symlinked plugin removes the link, not its target", async () => {
  const target = await makeTree({
    "plugin.yaml": "name: linked\nhooks:\n  task.done: a.sh\n",
    "a.sh": SCRIPT,
  });
  const root = await makeTree({});
  await Deno.symlink(target, join(root, "linked"));
  const result = await cli(["plugins", "remove", "linked", "--plugins-dir", root]);
  assert.equal(result.code, 0);
  assert.deepEqual([...Deno.readDirSync(root)], []);
  assert.ok((await Deno.stat(join(target, "plugin.yaml"))).isFile);
});
