import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, tempDir } from "../_cli.ts";
import { waitForFile } from "../_procs.ts";

// SPEC "How every script runs", --detach: the work travels on the background run's stdin.

/** A plugins dir whose task.done and post_tool_call hooks record what they got, and a cache dir. */
async function setup(hook = ""): Promise<{ plugins: string; cache: string; out: string }> {
  const plugins = await makeTree({
    "n/plugin.yaml": "name: n\nhooks:\n  task.done: done.sh\n  post_tool_call: post.sh\n",
    "n/done.sh":
      `#!/bin/sh\n${hook}printf '%s|%s' "$TASK_MESSAGE" "\${#TASK_TITLE}" > "$TASK_PLUGIN_DIR/.tmp"\n` +
      'mv "$TASK_PLUGIN_DIR/.tmp" "$TASK_PLUGIN_DIR/out"\n',
    "n/post.sh":
      '#!/bin/sh\ncat > "$TASK_PLUGIN_DIR/.tmp"\nmv "$TASK_PLUGIN_DIR/.tmp" "$TASK_PLUGIN_DIR/out"\n',
  });
  const cache = await tempDir({ prefix: "tyhooks-cache-" });
  return { plugins, cache, out: join(plugins, "n", "out") };
}

async function cleanup(...dirs: string[]): Promise<void> {
  for (const dir of dirs) await Deno.remove(dir, { recursive: true });
}

Deno.test('tyhooks fire --detach passes --message="-1 tests failed" to the hook in the background', async () => {
  const { plugins, cache, out } = await setup();
  try {
    const r = await cli([
      "fire",
      "task.done",
      "--detach",
      "--message=-1 tests failed",
      "--task-json",
      '{"id":1,"title":"abc"}',
      "--plugins-dir",
      plugins,
    ], { env: { XDG_CACHE_HOME: cache } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(await waitForFile(out, { ms: 15_000 }), "-1 tests failed|3");
  } finally {
    await cleanup(plugins, cache);
  }
});

Deno.test('tyhooks tool post --detach passes --error "-bash: x" to the post hook in the background', async () => {
  const { plugins, cache, out } = await setup();
  try {
    const r = await cli(
      [
        "tool",
        "post",
        "--detach",
        "--tool",
        "bash",
        "--error",
        "-bash: x",
        "--plugins-dir",
        plugins,
      ],
      { env: { XDG_CACHE_HOME: cache } },
    );
    assert.equal(r.code, 0, r.stderr);
    const request = JSON.parse(await waitForFile(out, { ms: 15_000 }));
    assert.deepEqual([request.tool, request.error], ["bash", "-bash: x"]);
  } finally {
    await cleanup(plugins, cache);
  }
});

Deno.test("tyhooks status-change --detach carries a 200 KiB task, and ps never shows it", async () => {
  // The hook waits for "go" so the background run is alive while ps is read.
  const { plugins, cache, out } = await setup(
    'i=0; while [ ! -e "$TASK_PLUGIN_DIR/go" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done\n',
  );
  const marker = `secret-${crypto.randomUUID()}`;
  const title = marker + "t".repeat(200 * 1024);
  try {
    const r = await cli(
      ["status-change", "done", "--detach", "--task", "-", "--plugins-dir", plugins],
      { env: { XDG_CACHE_HOME: cache }, stdin: JSON.stringify({ id: 2, title }) },
    );
    assert.equal(r.code, 0, r.stderr);
    const ps = await new Deno.Command("ps", { args: ["-eww", "-o", "args"], stdout: "piped" })
      .output();
    const listing = new TextDecoder().decode(ps.stdout);
    assert.ok(listing.includes("--detached-child"), "the background run is alive");
    assert.ok(!listing.includes(marker), "the task is not on any command line");
    await Deno.writeTextFile(join(plugins, "n", "go"), "");
    assert.equal(await waitForFile(out, { ms: 15_000 }), `|${64 * 1024}`);
  } finally {
    await cleanup(plugins, cache);
  }
});

Deno.test("tyhooks fire --detach keeps its log 0600 in a 0700 dir", async () => {
  const { plugins, cache, out } = await setup("echo from-the-hook >&2; exit 3\n");
  const dir = join(cache, "tyhooks");
  await Deno.mkdir(dir, { mode: 0o755 });
  await Deno.chmod(dir, 0o755);
  try {
    const r = await cli(["fire", "task.done", "--detach", "--plugins-dir", plugins], {
      env: { XDG_CACHE_HOME: cache },
    });
    assert.equal(r.code, 0, r.stderr);
    const log = join(dir, "detached.log");
    // The hook fails before writing "out": its warning is what reaches the log.
    assert.match(await waitForFile(log, { ms: 15_000 }), /exited 3/);
    assert.equal((await Deno.stat(log)).mode! & 0o777, 0o600);
    assert.equal((await Deno.stat(dir)).mode! & 0o777, 0o700);
    assert.ok(!(await Deno.stat(out).catch(() => null)));
  } finally {
    await cleanup(plugins, cache);
  }
});

Deno.test("tyhooks fire --detach never follows a symlink planted at the log path", async () => {
  const { plugins, cache, out } = await setup("echo from-the-hook >&2\n");
  const victim = join(await tempDir({ prefix: "tyhooks-victim-" }), "victim.txt");
  await Deno.writeTextFile(victim, "precious\n");
  await Deno.mkdir(join(cache, "tyhooks"), { mode: 0o700 });
  await Deno.symlink(victim, join(cache, "tyhooks", "detached.log"));
  try {
    const r = await cli(
      ["fire", "task.done", "--detach", "--log-level", "debug", "--plugins-dir", plugins],
      { env: { XDG_CACHE_HOME: cache } },
    );
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stderr, /writes no log: .*detached\.log" is a symbolic link, not followed/);
    assert.equal(await waitForFile(out, { ms: 15_000 }), "|0", "the run still happens");
    assert.equal(await Deno.readTextFile(victim), "precious\n");
    assert.ok((await Deno.lstat(join(cache, "tyhooks", "detached.log"))).isSymlink);
  } finally {
    await cleanup(plugins, cache, join(victim, ".."));
  }
});

// A file its owner cannot write: mode 0400, or as root (whom modes do not stop) immutable.
function unwritable(path: string, on: boolean): void {
  if (Deno.uid() !== 0) return Deno.chmodSync(path, on ? 0o400 : 0o600);
  const args = [on ? "+i" : "-i", path];
  const { success } = new Deno.Command("chattr", { args, stderr: "null" }).outputSync();
  if (!success) throw new Error(`chattr ${args.join(" ")} failed`);
}

// Root can only make a file unwritable with chattr, which some filesystems refuse.
function canMakeUnwritable(): boolean {
  if (Deno.uid() !== 0) return true;
  const path = Deno.makeTempFileSync();
  try {
    unwritable(path, true);
    unwritable(path, false);
    return true;
  } catch {
    return false;
  } finally {
    Deno.removeSync(path);
  }
}

Deno.test("tyhooks fire --detach with a log it cannot write says why, and the run still happens", {
  ignore: !canMakeUnwritable(),
}, async () => {
  const { plugins, cache, out } = await setup();
  const log = join(cache, "tyhooks", "detached.log");
  await Deno.mkdir(join(cache, "tyhooks"), { mode: 0o700 });
  await Deno.writeTextFile(log, "", { mode: 0o600 });
  unwritable(log, true);
  try {
    const r = await cli(["fire", "task.done", "--detach", "--plugins-dir", plugins], {
      env: { XDG_CACHE_HOME: cache },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stderr,
      /writes no log: cannot write ".*detached\.log": (Permission denied|Operation not permitted)/,
    );
    assert.equal(await waitForFile(out, { ms: 15_000 }), "|0");
  } finally {
    unwritable(log, false);
    await cleanup(plugins, cache);
  }
});

Deno.test("tyhooks fire and status-change --detach refuse an unknown --plugin at once (64), spooling nothing", async () => {
  const plugins = await makeTree({});
  const state = await tempDir();
  for (const line of [["fire", "custom.ev"], ["status-change", "done"]]) {
    const r = await cli([...line, "--detach", "--plugin", "nosuch", "--plugins-dir", plugins], {
      env: { XDG_STATE_HOME: state },
    });
    assert.equal(r.code, 64, r.stderr);
    assert.match(r.stderr, /Unknown plugin "nosuch" for flag "--plugin"/);
  }
  assert.deepEqual([...Deno.readDirSync(state)], [], "nothing spooled");
});
