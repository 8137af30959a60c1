import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, MAIN, makeTree, PERMISSION_FLAGS, spawnCli, V8_FLAGS } from "../_cli.ts";
import { commit, git, gitRepo, names, pluginFiles, pluginsAdd } from "./_git.ts";

async function listNames(root: string): Promise<string[]> {
  const result = await cli(["plugins", "list", "--json", "--plugins-dir", root]);
  return JSON.parse(result.stdout).plugins.map((p: { name: string }) => p.name);
}

async function sources(root: string): Promise<Record<string, Record<string, string>>> {
  return JSON.parse(await Deno.readTextFile(join(root, ".sources.json")));
}

Deno.test("plugins add of a file:// collection clones it whole, shallow, under the repo's name", async () => {
  const repo = await gitRepo({
    ...pluginFiles("one", "one/"),
    ...pluginFiles("two", "team/two/"),
    // As in ty's taskyou/plugins: a plugin using a script its collection shares.
    "three/plugin.yaml": "name: three\nhooks:\n  task.done: ../shared/notify.sh\n",
    "shared/notify.sh": "#!/bin/sh\necho shared\n",
    "README.md": "a collection\n",
  }, "plugins.git");
  await commit(repo, { "CHANGELOG.md": "second commit\n" });
  const root = join(await makeTree({}), "plugins-dir");
  const url = `file://${repo}`;
  const result = await pluginsAdd(root, url);
  assert.deepEqual(result, {
    code: 0,
    stdout: `Installed "plugins" in ${
      JSON.stringify(join(root, "plugins"))
    }: plugins one, three, two\n`,
    stderr: "",
  });
  assert.deepEqual(await listNames(root), ["one", "three", "two"]);
  assert.equal((await git(join(root, "plugins"), "rev-list", "--count", "HEAD")).trim(), "1");
  const recorded = await sources(root);
  assert.deepEqual(Object.keys(recorded), ["plugins"]);
  assert.equal(recorded.plugins.source, url);
  assert.match(recorded.plugins.installed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.deepEqual(names(root), [".sources.json", "plugins"]);
});

Deno.test("plugins add --ref checks out a tag or a commit, and records it", async () => {
  const repo = await gitRepo(pluginFiles("pinned"), "pinned");
  await git(repo, "tag", "v1");
  const first = (await git(repo, "rev-parse", "HEAD")).trim();
  await commit(repo, { "NEW.md": "after v1\n" });
  const root = await makeTree({});
  const tag = await pluginsAdd(root, `file://${repo}`, "--ref", "v1");
  assert.equal(tag.code, 0, tag.stderr);
  assert.equal(await Deno.stat(join(root, "pinned/NEW.md")).catch(() => null), null);
  assert.equal((await sources(root)).pinned.ref, "v1");
  const root2 = await makeTree({});
  const sha = await pluginsAdd(root2, `file://${repo}`, `--ref=${first}`);
  assert.equal(sha.code, 0, sha.stderr);
  assert.equal((await git(join(root2, "pinned"), "rev-parse", "HEAD")).trim(), first);
});

Deno.test("plugins add copies a local folder that is not a repository, keeping exec bits", async () => {
  const source = await makeTree({ ...pluginFiles("tracker"), "README.md": "docs\n" });
  const root = await makeTree({});
  const result = await pluginsAdd(root, source, "--name", "tr");
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    `Installed "tr" in ${JSON.stringify(join(root, "tr"))}: plugin tracker\n`,
  );
  assert.equal((await Deno.stat(join(root, "tr/on-done.sh"))).mode! & 0o111, 0o111);
  assert.equal((await sources(root)).tr.source, source);
  // Adding the same folder again replaces the copy.
  await Deno.writeTextFile(join(source, "README.md"), "docs v2\n");
  const again = await pluginsAdd(root, source, "--name", "tr");
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^Updated "tr"/);
  assert.equal(await Deno.readTextFile(join(root, "tr/README.md")), "docs v2\n");
});

Deno.test("plugins add removes what a killed install left in staging, not a stage another install holds", async () => {
  const source = await makeTree(pluginFiles("tracker"));
  const root = await makeTree({
    // A killed install's stage: its copy half made, its lock held by nobody.
    ".tyhooks-staging/.git/add-killed/.lock": "",
    ".tyhooks-staging/.git/add-killed/tracker/big.bin": "x".repeat(100_000),
    ".tyhooks-staging/.git/add-running/.lock": "",
  });
  // Both an hour old: a stage younger than a minute is kept whatever its lock says.
  const hourAgo = new Date(Date.now() - 3_600_000);
  for (const stage of ["add-killed", "add-running"]) {
    await Deno.utime(join(root, ".tyhooks-staging/.git", stage), hourAgo, hourAgo);
  }
  // An install still running holds its stage's lock.
  const running = await Deno.open(join(root, ".tyhooks-staging/.git/add-running/.lock"), {
    write: true,
  });
  await running.lock(true);
  try {
    const result = await pluginsAdd(root, source, "--name", "tr");
    assert.equal(result.code, 0, result.stderr);
    const left = [...Deno.readDirSync(join(root, ".tyhooks-staging/.git"))].map((e) => e.name);
    assert.deepEqual(left, ["add-running"]);
  } finally {
    running.close();
  }
});

Deno.test("plugins add re-adds a plugin ty installed (its folder, its .sources.json) as an update", async () => {
  const repo = await gitRepo(pluginFiles("notify"), "ty-notify");
  const root = await makeTree({});
  const url = `file://${repo}`;
  // What `ty plugins add` leaves: a shallow checkout named after the repo, and ty's record.
  await git(root, "clone", "-q", "--depth", "1", url, join(root, "ty-notify"));
  await Deno.writeTextFile(
    join(root, ".sources.json"),
    JSON.stringify(
      { "ty-notify": { source: url, installed_at: "2026-01-01T00:00:00Z" } },
      null,
      2,
    ) +
      "\n",
  );
  await commit(repo, { "CHANGELOG.md": "new\n" });
  const result = await pluginsAdd(root, url);
  assert.equal(result.code, 0, result.stderr);
  assert.equal(
    result.stdout,
    `Updated "ty-notify" in ${JSON.stringify(join(root, "ty-notify"))}: plugin notify\n`,
  );
  assert.equal(await Deno.readTextFile(join(root, "ty-notify/CHANGELOG.md")), "new\n");
  assert.notEqual((await sources(root))["ty-notify"].installed_at, "2026-01-01T00:00:00Z");
});

Deno.test("plugins add refuses a folder that holds something else, and changes nothing", async () => {
  const repo = await gitRepo(pluginFiles("tracker"), "tracker");
  const root = await makeTree({ "tracker/notes.txt": "mine\n" });
  const result = await pluginsAdd(root, `file://${repo}`);
  assert.equal(result.code, 1);
  assert.equal(
    result.stderr,
    `tyhooks: Cannot install "file://${repo}": ${
      JSON.stringify(join(root, "tracker"))
    } already exists and has no recorded source\n` +
      "hint: remove it first (tyhooks plugins remove tracker) or install under --name\n",
  );
  assert.equal(await Deno.readTextFile(join(root, "tracker/notes.txt")), "mine\n");
  assert.deepEqual(names(root), ["tracker"]);
});

Deno.test("plugins add of a source with no usable plugin installs nothing and says why", async () => {
  const root = await makeTree({});
  const empty = await gitRepo({ "README.md": "no plugin here\n" }, "empty");
  const first = await pluginsAdd(root, `file://${empty}`);
  assert.equal(first.code, 1);
  assert.match(
    first.stderr,
    /^tyhooks: Source "file:\/\/.*\/empty" holds no usable plugin: it holds no plugin.yaml\n/,
  );
  const broken = await makeTree({
    "plugin.yaml": "name: broken\nhooks:\n  task.done: missing.sh\n",
  });
  const second = await pluginsAdd(root, broken, "--name", "broken");
  assert.equal(second.code, 1);
  assert.match(second.stderr, /holds no usable plugin: .*missing\.sh/);
  assert.deepEqual(names(root), []);
});

Deno.test("plugins add refuses a plugin whose name another install already has", async () => {
  const root = await makeTree({});
  const a = await makeTree(pluginFiles("same"));
  const b = await makeTree(pluginFiles("same"));
  assert.equal((await pluginsAdd(root, a, "--name", "a")).code, 0);
  const result = await pluginsAdd(root, b, "--name", "b");
  assert.equal(result.code, 1);
  assert.match(result.stderr, /holds plugin "same", already installed in ".*\/a"/);
  assert.deepEqual(names(root), [".sources.json", "a"]);
});

Deno.test("plugins add refuses sources and refs that are not of an accepted form (usage error)", async () => {
  const root = await makeTree({});
  for (
    const source of [
      "ext::sh -c touch% /tmp/pwned",
      "--upload-pack=touch /tmp/pwned",
      "-oProxyCommand=x",
      "http://example.com/x.git",
      "fd::3",
      "git@-oProxyCommand=x:repo",
      "just-a-word",
      "a/b/c",
    ]
  ) {
    // After "--": the command line takes it as SOURCE, as a script passing user input would.
    const result = await cli(["plugins", "add", "--plugins-dir", root, "--", source]);
    assert.equal(result.code, 64, `${source}: ${result.stderr}`);
    assert.match(
      result.stderr,
      /^tyhooks: Invalid plugin source .*\nhint: accepted forms:\n/,
      source,
    );
  }
  const repo = await gitRepo(pluginFiles("x"), "x");
  const ref = await pluginsAdd(root, `file://${repo}`, "--ref=--orphan");
  assert.equal(ref.code, 64);
  assert.match(ref.stderr, /Invalid value "--orphan" for flag "--ref"/);
  for (const name of ["../up", "a/b", ".hidden", ""]) {
    const result = await pluginsAdd(root, repo, "--name", name);
    assert.equal(result.code, 64, name);
  }
  assert.deepEqual(names(root), []);
});

Deno.test("plugins add of a folder whose name starts with - asks for --name, as --name would refuse it", async () => {
  const parent = await makeTree({ ...pluginFiles("x", "-evil/") });
  const root = await makeTree({});
  const result = await pluginsAdd(root, join(parent, "-evil"));
  assert.equal(result.code, 1, result.stderr);
  assert.match(result.stderr, /"-evil" is not a safe folder name\n.*hint: give one with --name/);
  assert.deepEqual(names(root), []);
  const named = await pluginsAdd(root, join(parent, "-evil"), "--name", "evil");
  assert.equal(named.code, 0, named.stderr);
});

Deno.test("plugins add --name refuses a name that starts with - or . (usage error naming it), and installs nothing", async () => {
  const source = await makeTree(pluginFiles("x"));
  const root = await makeTree({});
  for (const name of ["-rf", "--force", "-", ".hidden", ".."]) {
    for (const args of [["--name", name], [`--name=${name}`]]) {
      const result = await pluginsAdd(root, source, ...args);
      assert.equal(result.code, 64, `${args.join(" ")}: ${result.stderr}`);
      assert.match(
        result.stderr,
        new RegExp(
          `^tyhooks: Invalid value ${RegExp.escape(JSON.stringify(name))} for flag "--name"`,
        ),
      );
      assert.equal(result.stdout, "");
    }
  }
  assert.deepEqual(names(root), []);
});

Deno.test("plugins add reports a failing git clone and leaves nothing behind", async () => {
  const root = await makeTree({});
  const result = await pluginsAdd(root, `file://${root}/no-such-repo`);
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^tyhooks: git clone failed \(exited 128\): fatal: /);
  assert.deepEqual(names(root), []);
});

Deno.test("plugins add shows git's progress on stderr when it is a terminal, and only then", async () => {
  // script(1) gives the command a terminal; skipped where it is missing.
  const script = await new Deno.Command("sh", { args: ["-c", "command -v script"] }).output();
  if (script.code !== 0) return;
  const repo = await gitRepo(pluginFiles("loud"), "loud");
  const root = await makeTree({});
  const command = [
    Deno.execPath(),
    "run",
    "--quiet",
    ...PERMISSION_FLAGS,
    ...V8_FLAGS,
    MAIN,
    "plugins",
    "add",
    `file://${repo}`,
    "--plugins-dir",
    root,
  ].map((w) => `'${w}'`).join(" ");
  const out = await new Deno.Command("script", {
    args: ["-qec", command, "/dev/null"],
    env: { NO_COLOR: "1" },
    stdin: "null",
  }).output();
  const text = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, text);
  assert.match(text, /Receiving objects: 100%/);
  assert.match(text, /Installed "loud"/);
  const piped = await pluginsAdd(await makeTree({}), `file://${repo}`);
  assert.equal(piped.stderr, "");
});

Deno.test("plugins add run six at once records every install, and of two sources for one folder installs one", async () => {
  const root = await makeTree({});
  const folders = await makeTree(
    Object.assign({}, ...["c1", "c2", "c3", "c4", "c5", "c6"].map((n) => pluginFiles(n, `${n}/`))),
  );
  const added = await Promise.all(
    ["c1", "c2", "c3", "c4", "c5", "c6"].map((n) => pluginsAdd(root, join(folders, n))),
  );
  for (const r of added) assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(Object.keys(await sources(root)), ["c1", "c2", "c3", "c4", "c5", "c6"]);
  // Two folders named "dup", from different places: the second finds the first installed.
  const twins = await makeTree({
    ...pluginFiles("dupx", "x/dup/"),
    ...pluginFiles("dupy", "y/dup/"),
  });
  const both = await Promise.all(["x", "y"].map((at) => pluginsAdd(root, join(twins, at, "dup"))));
  assert.deepEqual(both.map((r) => r.code).sort(), [0, 1], both.map((r) => r.stderr).join("\n"));
  const refused = both.find((r) => r.code === 1)!;
  assert.match(refused.stderr, /already holds an install of/);
  const kept = both.find((r) => r.code === 0)!;
  assert.equal((await sources(root)).dup.source, join(twins, kept === both[0] ? "x" : "y", "dup"));
});

Deno.test("plugins add refuses, naming it, a .sources.json it cannot read whole or that is a link, and installs nothing", async () => {
  const source = await makeTree(pluginFiles("n1"));
  for (
    const [what, make] of [
      ["malformed", (at: string) => Deno.writeTextFile(at, '{"keep":{"source":"/x"},}')],
      ["a link", async (at: string) => {
        await Deno.writeTextFile(`${at}.real`, '{"keep":{"source":"/x"}}\n');
        await Deno.symlink(`${at}.real`, at);
      }],
    ] as const
  ) {
    const root = await makeTree({});
    const file = join(root, ".sources.json");
    await make(file);
    const before = await Deno.readTextFile(file);
    const r = await pluginsAdd(root, source, "--name", "n1");
    assert.equal(r.code, 1, `${what}: ${r.stderr}`);
    assert.match(r.stderr, /Cannot record the install in ".*\/\.sources\.json": it /, what);
    assert.match(r.stderr, /move it aside/, what);
    assert.equal(await Deno.readTextFile(file), before, `${what}: the records are kept`);
    assert.equal((await Deno.lstat(file)).isSymlink, what === "a link", what);
    assert.ok(!names(root).includes("n1"), `${what}: nothing installed`);
  }
});

Deno.test("plugins add refuses a source of more folders than a search of the plugins dir lists, and installs nothing", async () => {
  // A collection (no plugin.yaml at its root): each of its folders is searched.
  const source = await makeTree(pluginFiles("lost", "lost/"));
  for (let i = 0; i < 10_050; i++) await Deno.mkdir(join(source, `d${i}`));
  const root = await makeTree({});
  const r = await pluginsAdd(root, source, "--name", "many");
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /holds more than 10000 folders, and with it every search of the plugins/);
  assert.deepEqual(names(root), []);
  await Deno.remove(source, { recursive: true });
});

Deno.test("plugins add waiting for another's turn says so, and SIGINT ends the wait having changed nothing", async () => {
  const root = await makeTree({});
  const source = await makeTree(pluginFiles("later"));
  // Another add, update or remove of this plugins dir holds its lock.
  const other = await Deno.open(root, { read: true });
  await other.lock(true);
  let stderr = "";
  try {
    const child = spawnCli(["plugins", "add", source, "--plugins-dir", root]);
    const reader = child.stderr.pipeThrough(new TextDecoderStream()).getReader();
    while (!stderr.includes("Waiting for another plugins add, update or remove")) {
      const { done, value } = await reader.read();
      if (done) break;
      stderr += value;
    }
    child.kill("SIGINT");
    // An uninterruptible wait would wait for the lock this test holds: bounded, then killed.
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    const status = await child.status;
    clearTimeout(timer);
    await reader.cancel();
    await child.stdout.cancel();
    assert.equal(status.code, 130, stderr);
  } finally {
    other.close();
  }
  assert.deepEqual(names(root), [], "nothing installed after the interrupt");
});
