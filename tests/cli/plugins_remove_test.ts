import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";
import { gitRepo, names, pluginFiles, pluginsAdd } from "./_git.ts";

Deno.test("plugins remove of one plugin in an installed collection deletes only its folder", async () => {
  const repo = await gitRepo({
    ...pluginFiles("one", "one/"),
    ...pluginFiles("two", "two/"),
    "notes.md": "keep me\n",
  }, "team");
  const root = await makeTree({});
  assert.equal((await pluginsAdd(root, `file://${repo}`)).code, 0);
  const result = await cli(["plugins", "remove", "one", "--plugins-dir", root]);
  assert.deepEqual(result, {
    code: 0,
    stdout: `Removed "one": deleted ${JSON.stringify(join(root, "team/one"))}; the rest of ${
      JSON.stringify(join(root, "team"))
    } stays\n`,
    stderr: "",
  });
  assert.deepEqual(names(join(root, "team")), [".git", "notes.md", "two"]);
  // The install is still recorded, so `plugins update team` still knows where it came from.
  assert.ok("team" in JSON.parse(await Deno.readTextFile(join(root, ".sources.json"))));
});

Deno.test("plugins remove of a whole install (rm, by folder) deletes it and its record", async () => {
  const repo = await gitRepo(
    { ...pluginFiles("one", "one/"), ...pluginFiles("two", "two/") },
    "team",
  );
  const other = await gitRepo(pluginFiles("solo"), "solo");
  const root = await makeTree({});
  for (const r of [repo, other]) {
    assert.equal((await pluginsAdd(root, `file://${r}`)).code, 0);
  }
  const result = await cli(["plugins", "remove", "team", "--plugins-dir", root]);
  assert.deepEqual(result, {
    code: 0,
    stdout: `Removed "team": deleted ${JSON.stringify(join(root, "team"))}\n`,
    stderr: "",
  });
  assert.deepEqual(names(root), [".sources.json", "solo"]);
  assert.deepEqual(Object.keys(JSON.parse(await Deno.readTextFile(join(root, ".sources.json")))), [
    "solo",
  ]);
});

Deno.test("plugins remove takes the plugin's name, or its folder's as ty does", async () => {
  const root = await makeTree({
    ...pluginFiles("real-name", "folder/"),
    ...pluginFiles("other", "deep/nest/"),
  });
  const byName = await cli(["plugins", "remove", "real-name", "--plugins-dir", root]);
  assert.equal(byName.code, 0, byName.stderr);
  const byFolder = await cli(["plugins", "remove", "nest", "--plugins-dir", root]);
  assert.equal(byFolder.code, 0, byFolder.stderr);
  assert.deepEqual(names(root), ["deep"]);
  assert.deepEqual(names(join(root, "deep")), []);
});

Deno.test("plugins remove of an unknown name fails with exit 1 and touches nothing", async () => {
  const root = await makeTree(pluginFiles("one", "one/"));
  const result = await cli(["plugins", "remove", "nope", "--plugins-dir", root]);
  assert.deepEqual(result, {
    code: 1,
    stdout: "",
    stderr: `tyhooks: No plugin named "nope" in ${
      JSON.stringify(root)
    }\nhint: see "tyhooks plugins list"\n`,
  });
  assert.deepEqual(names(root), ["one"]);
});

Deno.test("plugins remove of a symlinked plugin unlinks the link, never its target", async () => {
  const target = await makeTree(pluginFiles("linked"));
  const root = await makeTree({});
  await Deno.symlink(target, join(root, "linked-dir"));
  const result = await cli(["plugins", "remove", "linked", "--plugins-dir", root]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    `Removed "linked": deleted the symlink ${JSON.stringify(join(root, "linked-dir"))}\n`,
  );
  assert.deepEqual(names(root), []);
  assert.deepEqual(names(target), ["on-done.sh", "plugin.yaml"]);
});

Deno.test("plugins remove refuses a plugin inside a symlinked collection: nothing outside is deleted", async () => {
  // A collection symlinked into the plugins dir: removing a plugin through the link would delete
  // the real source folder, unrelated files included.
  const real = await makeTree({
    ...pluginFiles("victim", "victim/"),
    "victim/unrelated.txt": "precious\n",
    "other.txt": "precious too\n",
  });
  const root = await makeTree({});
  await Deno.symlink(real, join(root, "shared"));
  const result = await cli(["plugins", "remove", "victim", "--plugins-dir", root]);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "");
  assert.equal(
    result.stderr,
    `tyhooks: Refusing to remove "victim": it lies inside ${
      JSON.stringify(join(root, "shared"))
    }, a symlink to ${JSON.stringify(await Deno.realPath(real))}, outside the plugins dir\n` +
      'hint: remove the symlink itself with "tyhooks plugins remove shared"\n',
  );
  assert.equal(await Deno.readTextFile(join(real, "victim/unrelated.txt")), "precious\n");
  assert.equal(await Deno.readTextFile(join(real, "other.txt")), "precious too\n");
  assert.ok((await Deno.stat(join(real, "victim/plugin.yaml"))).isFile);
  // The folder name removes the link itself, and still nothing behind it.
  const link = await cli(["plugins", "uninstall", "shared", "--plugins-dir", root]);
  assert.equal(link.code, 0, link.stderr);
  assert.deepEqual(names(root), []);
  assert.equal(await Deno.readTextFile(join(real, "victim/unrelated.txt")), "precious\n");
});

Deno.test("plugins remove of an empty name is a usage error (64), as an unset shell variable gives it", async () => {
  const root = await makeTree({});
  const r = await cli(["plugins", "remove", " ", "--plugins-dir", root]);
  assert.equal(r.code, 64, r.stderr);
  assert.match(r.stderr, /needs a plugin or folder name, not an empty one/);
});
