import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, writeTree } from "../_cli.ts";

const SCRIPT = "#!/bin/sh\nexit 0\n";

function pluginFiles(name: string, version = "0.1.0"): Record<string, string> {
  return {
    "plugin.yaml": `name: ${name}\nversion: ${version}\nhooks:\n  task.done: bin/on-done.sh\n`,
    "bin/on-done.sh": SCRIPT,
    "README.md": "docs\n",
  };
}

const GIT_ENV = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_CONFIG_GLOBAL: "/dev/null",
  GIT_CONFIG_NOSYSTEM: "1",
};

async function git(cwd: string, ...args: string[]): Promise<void> {
  const out = await new Deno.Command("git", { args, cwd, env: GIT_ENV }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
}

async function gitRepo(files: Record<string, string>): Promise<string> {
  const repo = await makeTree(files);
  await git(repo, "init", "-q", "-b", "main");
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "first");
  return repo;
}

async function listNames(root: string): Promise<string[]> {
  const result = await cli(["plugins", "list", "--json", "--plugins-dir", root]);
  return JSON.parse(result.stdout).plugins.map((p: { name: string }) => p.name);
}

Deno.test("plugins add copies a local folder under the manifest's name, keeping exec bits, without .git", async () => {
  const source = await makeTree({
    ...pluginFiles("tracker"),
    ".git/HEAD": "ref: refs/heads/main\n",
  });
  const root = join(await makeTree({}), "plugins");
  const result = await cli(["plugins", "add", source, "--plugins-dir", root]);
  assert.deepEqual(result, {
    code: 0,
    stdout: `Installed "tracker" in ${JSON.stringify(join(root, "tracker"))}\n`,
    stderr: "",
  });
  const script = await Deno.stat(join(root, "tracker/bin/on-done.sh"));
  assert.equal(script.mode! & 0o111, 0o111);
  assert.equal(await Deno.stat(join(root, "tracker/.git")).catch(() => null), null);
  assert.deepEqual(await listNames(root), ["tracker"]);
});

Deno.test("plugins add of the same plugin again replaces the installed copy", async () => {
  const source = await makeTree(pluginFiles("tracker", "0.1.0"));
  const root = await makeTree({});
  assert.equal((await cli(["plugins", "add", source, "--plugins-dir", root])).code, 0);
  await writeTree(root, { "tracker/stale.txt": "left from the old copy\n" });
  await writeTree(source, {
    "plugin.yaml": "name: tracker\nversion: 0.2.0\nhooks:\n  task.done: bin/on-done.sh\n",
  });
  const result = await cli(["plugins", "add", source, "--plugins-dir", root]);
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `Updated "tracker" in ${JSON.stringify(join(root, "tracker"))}\n`);
  assert.match(await Deno.readTextFile(join(root, "tracker/plugin.yaml")), /version: 0.2.0/);
  assert.equal(await Deno.stat(join(root, "tracker/stale.txt")).catch(() => null), null);
});

Deno.test("plugins add refuses to overwrite a folder holding a different plugin", async () => {
  const source = await makeTree(pluginFiles("tracker"));
  const root = await makeTree({ "tracker/plugin.yaml": "name: someone-else\n" });
  const result = await cli(["plugins", "add", source, "--plugins-dir", root]);
  assert.equal(result.code, 1);
  assert.equal(result.stdout, "");
  assert.equal(
    result.stderr,
    `tyhooks: Refusing to overwrite ${JSON.stringify(join(root, "tracker"))}: it holds another ` +
      'plugin ("someone-else"): use --name to install "tracker" elsewhere\n',
  );
  assert.equal(await Deno.readTextFile(join(root, "tracker/plugin.yaml")), "name: someone-else\n");
});

Deno.test("plugins add refuses to overwrite a folder that is not a plugin", async () => {
  const source = await makeTree(pluginFiles("tracker"));
  const root = await makeTree({ "tracker/notes.txt": "mine\n" });
  const result = await cli(["plugins", "add", source, "--plugins-dir", root]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /it is not a plugin \(it has no plugin.yaml\)/);
  assert.equal(await Deno.readTextFile(join(root, "tracker/notes.txt")), "mine\n");
});

Deno.test("plugins add --name installs under another folder name", async () => {
  const source = await makeTree(pluginFiles("tracker"));
  const root = await makeTree({});
  const result = await cli(["plugins", "add", source, "--name", "tr", "--plugins-dir", root]);
  assert.equal(result.code, 0);
  assert.equal(result.stdout, `Installed "tracker" in ${JSON.stringify(join(root, "tr"))}\n`);
});

Deno.test("plugins add refuses a --name that is not one safe folder name (usage error)", async () => {
  const source = await makeTree(pluginFiles("tracker"));
  const root = await makeTree({});
  for (const name of ["../up", "a/b", ".hidden", ""]) {
    const result = await cli(["plugins", "add", source, "--name", name, "--plugins-dir", root]);
    assert.equal(result.code, 64, name);
    assert.match(result.stderr, /^tyhooks: Invalid value ".*" for flag "--name"/);
  }
  assert.deepEqual([...Deno.readDirSync(root)], []);
});

Deno.test("plugins add refuses a source without a usable plugin.yaml, installing nothing", async () => {
  const root = await makeTree({});
  const noManifest = await makeTree({ "README.md": "hi\n" });
  const noName = await makeTree({ "plugin.yaml": "version: 1\n" });
  const first = await cli(["plugins", "add", noManifest, "--plugins-dir", root]);
  assert.equal(first.code, 1);
  assert.equal(
    first.stderr,
    `tyhooks: Cannot install ${JSON.stringify(noManifest)}: it has no plugin.yaml\n`,
  );
  const second = await cli(["plugins", "add", noName, "--plugins-dir", root]);
  assert.equal(second.code, 1);
  assert.match(second.stderr, /its plugin.yaml has no "name"/);
  const third = await cli(["plugins", "add", join(root, "missing"), "--plugins-dir", root]);
  assert.equal(third.code, 1);
  assert.match(third.stderr, /it is neither a folder nor a git URL/);
  assert.deepEqual([...Deno.readDirSync(root)], []);
});

Deno.test("plugins add clones a git URL, and adding it again pulls", async () => {
  const repo = await gitRepo(pluginFiles("from-git"));
  const root = await makeTree({});
  const url = `file://${repo}`;
  const first = await cli(["plugins", "add", url, "--plugins-dir", root]);
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout, `Installed "from-git" in ${JSON.stringify(join(root, "from-git"))}\n`);
  assert.ok((await Deno.stat(join(root, "from-git/.git"))).isDirectory);
  assert.deepEqual(await listNames(root), ["from-git"]);

  await writeTree(repo, { "CHANGELOG.md": "0.2.0\n" });
  await git(repo, "add", "-A");
  await git(repo, "commit", "-q", "-m", "second");
  const second = await cli(["plugins", "add", url, "--plugins-dir", root]);
  assert.equal(second.code, 0, second.stderr);
  assert.equal(second.stdout, `Updated "from-git" in ${JSON.stringify(join(root, "from-git"))}\n`);
  assert.equal(await Deno.readTextFile(join(root, "from-git/CHANGELOG.md")), "0.2.0\n");
  assert.deepEqual([...Deno.readDirSync(root)].map((e) => e.name), ["from-git"]);
});

Deno.test("plugins add clones a local bare repository", async () => {
  const repo = await gitRepo(pluginFiles("bare-one"));
  const bare = join(await makeTree({}), "bare-one.git");
  await git(repo, "clone", "-q", "--bare", repo, bare);
  const root = await makeTree({});
  const result = await cli(["plugins", "add", bare, "--plugins-dir", root]);
  assert.equal(result.code, 0, result.stderr);
  assert.deepEqual(await listNames(root), ["bare-one"]);
});

Deno.test("plugins add reports a failing git clone and leaves nothing behind", async () => {
  const root = await makeTree({});
  const result = await cli([
    "plugins",
    "add",
    `file://${root}/no-such-repo`,
    "--plugins-dir",
    root,
  ]);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^tyhooks: git clone failed \(exited 128\): fatal: /);
  assert.deepEqual([...Deno.readDirSync(root)], []);
});
