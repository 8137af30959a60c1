import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";
import { commit, git, gitRepo, pluginFiles, pluginsAdd } from "./_git.ts";

async function listNames(root: string): Promise<string[]> {
  const result = await cli(["plugins", "list", "--json", "--plugins-dir", root]);
  return JSON.parse(result.stdout).plugins.map((p: { name: string }) => p.name);
}

Deno.test("plugins update pulls a new upstream commit into a collection, by plugin or by folder", async () => {
  const repo = await gitRepo(
    { ...pluginFiles("one", "one/"), ...pluginFiles("two", "two/") },
    "team",
  );
  const root = await makeTree({});
  assert.equal((await pluginsAdd(root, `file://${repo}`)).code, 0);
  await commit(repo, { ...pluginFiles("three", "three/") });
  // A plugin's name updates the whole install it is part of.
  const byPlugin = await cli(["plugins", "update", "two", "--plugins-dir", root]);
  assert.deepEqual(byPlugin, {
    code: 0,
    stdout: `Updated "team" in ${JSON.stringify(join(root, "team"))}: plugins one, three, two\n`,
    stderr: "",
  });
  await commit(repo, { "one/NOTES.md": "later\n" });
  const all = await cli(["plugins", "update", "--plugins-dir", root]);
  assert.equal(all.code, 0, all.stderr);
  assert.equal(await Deno.readTextFile(join(root, "team/one/NOTES.md")), "later\n");
  const byFolder = await cli(["plugins", "update", "team", "--plugins-dir", root]);
  assert.equal(byFolder.code, 0, byFolder.stderr);
});

Deno.test("plugins update of a broken upstream keeps the working copy and fails", async () => {
  const repo = await gitRepo(pluginFiles("notify"), "ty-notify");
  const root = await makeTree({});
  assert.equal((await pluginsAdd(root, `file://${repo}`)).code, 0);
  const before = await Deno.readTextFile(join(root, ".sources.json"));
  // Upstream breaks the manifest: its only hook now names a script that does not exist.
  await commit(repo, { "plugin.yaml": "name: notify\nhooks:\n  task.done: gone.sh\n" });
  const result = await cli(["plugins", "update", "notify", "--plugins-dir", root]);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "");
  assert.match(
    result.stderr,
    /^tyhooks: Source "file:\/\/.*ty-notify" holds no usable plugin: .*gone\.sh.*; ".*ty-notify" is back where it was\n/,
  );
  assert.match(await Deno.readTextFile(join(root, "ty-notify/plugin.yaml")), /on-done\.sh/);
  assert.equal(await Deno.readTextFile(join(root, ".sources.json")), before);
  assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name).sort(), [
    ".sources.json",
    "ty-notify",
  ]);
  assert.deepEqual(await listNames(root), ["notify"]);
});

Deno.test("plugins update of a checkout keeps what its plugin wrote there, as ty's git pull does", async () => {
  const repo = await gitRepo(pluginFiles("notify"), "ty-notify");
  const root = await makeTree({});
  assert.equal((await pluginsAdd(root, `file://${repo}`)).code, 0);
  await Deno.writeTextFile(join(root, "ty-notify/notifications.log"), "task 1 done\n");
  await commit(repo, { "CHANGELOG.md": "v2\n" });
  const result = await cli(["plugins", "update", "ty-notify", "--plugins-dir", root]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(await Deno.readTextFile(join(root, "ty-notify/CHANGELOG.md")), "v2\n");
  assert.equal(await Deno.readTextFile(join(root, "ty-notify/notifications.log")), "task 1 done\n");
});

Deno.test("plugins update follows the branch given with --ref", async () => {
  const repo = await gitRepo(pluginFiles("pinned"), "pinned");
  await git(repo, "checkout", "-q", "-b", "dev");
  await commit(repo, { "DEV.md": "dev 1\n" });
  await git(repo, "checkout", "-q", "main");
  const root = await makeTree({});
  const add = await pluginsAdd(root, `file://${repo}`, "--ref", "dev");
  assert.equal(add.code, 0, add.stderr);
  await git(repo, "checkout", "-q", "dev");
  await commit(repo, { "DEV.md": "dev 2\n" });
  await git(repo, "checkout", "-q", "main");
  await commit(repo, { "MAIN.md": "main only\n" });
  const result = await cli(["plugins", "update", "pinned", "--plugins-dir", root]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(await Deno.readTextFile(join(root, "pinned/DEV.md")), "dev 2\n");
  assert.equal(await Deno.stat(join(root, "pinned/MAIN.md")).catch(() => null), null);
  assert.equal(JSON.parse(await Deno.readTextFile(join(root, ".sources.json"))).pinned.ref, "dev");
});

Deno.test("plugins update of everything reports each failure and exits 1", async () => {
  const good = await gitRepo(pluginFiles("good"), "good");
  const bad = await gitRepo(pluginFiles("bad"), "bad");
  const root = await makeTree({ "by-hand/plugin.yaml": "name: by-hand\n" });
  for (const repo of [good, bad]) {
    assert.equal((await pluginsAdd(root, `file://${repo}`)).code, 0);
  }
  await Deno.remove(bad, { recursive: true });
  const result = await cli(["plugins", "update", "--plugins-dir", root]);
  assert.equal(result.code, 1);
  assert.equal(
    result.stdout,
    `Updated "good" in ${JSON.stringify(join(root, "good"))}: plugin good\n`,
  );
  assert.match(
    result.stderr,
    /error: Not updated: Cannot update "bad": git pull failed \(exited 1\): fatal: .*folder=bad/,
  );
});

Deno.test("plugins update of a folder with no known source, or a symlinked one, fails clearly", async () => {
  const elsewhere = await makeTree(pluginFiles("linked"));
  const root = await makeTree(pluginFiles("by-hand", "by-hand/"));
  await Deno.symlink(elsewhere, join(root, "linked"));
  const unknown = await cli(["plugins", "update", "by-hand", "--plugins-dir", root]);
  assert.equal(unknown.code, 1);
  assert.match(unknown.stderr, /Cannot update "by-hand": where it came from is unknown/);
  const linked = await cli(["plugins", "update", "linked", "--plugins-dir", root]);
  assert.equal(linked.code, 1);
  assert.match(linked.stderr, /Cannot update "linked": it is a symlink to/);
  const none = await cli(["plugins", "update", "nope", "--plugins-dir", root]);
  assert.equal(none.code, 1);
  assert.match(none.stderr, /No plugin or install named "nope"/);
  // A record no command line gave: an error naming the file, not a usage error.
  await Deno.writeTextFile(
    join(root, ".sources.json"),
    JSON.stringify({ "by-hand": { source: elsewhere, ref: "--upload-pack=touch /tmp/x" } }),
  );
  const badRef = await cli(["plugins", "update", "by-hand", "--plugins-dir", root]);
  assert.equal(badRef.code, 1, badRef.stderr);
  assert.match(
    badRef.stderr,
    /Cannot update "by-hand": its record in ".*\/\.sources\.json" is not usable: Invalid value "--upload-pack=touch \/tmp\/x" for "ref"/,
  );
});

Deno.test("plugins update re-copies a plugin ty took out of a collection (subdir), and refuses a subdir that leaves it", async () => {
  const repo = await gitRepo({ ...pluginFiles("notify", "plugins/notify/") }, "catalog");
  const root = await makeTree({ ...pluginFiles("notify", "notify/") });
  const record = (subdir: string) =>
    JSON.stringify({ notify: { id: "notify", source: `file://${repo}`, subdir } }, null, 2) + "\n";
  await Deno.writeTextFile(join(root, ".sources.json"), record("plugins/notify"));
  await commit(repo, { "plugins/notify/CHANGELOG.md": "v2\n" });
  const result = await cli(["plugins", "update", "notify", "--plugins-dir", root]);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(await Deno.readTextFile(join(root, "notify/CHANGELOG.md")), "v2\n");
  assert.equal(await Deno.stat(join(root, "notify/.git")).catch(() => null), null);
  const kept = JSON.parse(await Deno.readTextFile(join(root, ".sources.json"))).notify;
  assert.deepEqual([kept.id, kept.subdir], ["notify", "plugins/notify"]);

  await Deno.writeTextFile(join(root, ".sources.json"), record("../.."));
  const hostile = await cli(["plugins", "update", "notify", "--plugins-dir", root]);
  assert.equal(hostile.code, 1);
  assert.match(
    hostile.stderr,
    /Source ".*\/\.\." : no such folder|Source ".*\.\.": no such folder/,
  );
  assert.equal(await Deno.readTextFile(join(root, "notify/CHANGELOG.md")), "v2\n");
});

Deno.test("plugins update of a checkout whose upstream rewrote its history fails naming the install and how to add it afresh", async () => {
  const repo = await gitRepo(pluginFiles("one"), "rewritten");
  const root = await makeTree({});
  assert.equal((await pluginsAdd(root, `file://${repo}`)).code, 0);
  await git(repo, "commit", "--amend", "-q", "-m", "rewritten");
  const r = await cli(["plugins", "update", "rewritten", "--plugins-dir", root]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /Cannot update "rewritten": git pull failed/);
  assert.match(
    r.stderr,
    new RegExp(
      `hint: .*tyhooks plugins remove rewritten && tyhooks plugins add file://${repo} --name rewritten`,
    ),
  );
  assert.deepEqual(await listNames(root), ["one"]);
});
