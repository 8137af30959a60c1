import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, RUN_KEYS, spawnCli, tempDir } from "../_cli.ts";
import { actionFiles, pluginsHandling } from "./_trees.ts";
import { alive, readPid, waitGone } from "../_procs.ts";

const TASK = JSON.stringify({
  id: 7,
  title: "Ship it",
  status: "done",
  project: "web",
  extra: [1],
});

Deno.test("tyhooks fire runs every hook, prints records with --json, and exits 0 though one fails", async () => {
  const plugins = await pluginsHandling("task.done", {
    ok: '#!/bin/sh\necho "$TASK_ID $TASK_MESSAGE"\n',
    bad: "#!/bin/sh\necho nope >&2\nexit 5\n",
  });
  const r = await cli([
    "fire",
    "task.done",
    "--task-json",
    TASK,
    "--message",
    "hi",
    "--json",
    "--plugins-dir",
    plugins,
  ]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.event, "task.done");
  assert.deepEqual(
    doc.runs.map((x: { plugin: string; exit_code: number }) => [x.plugin, x.exit_code]),
    [
      ["bad", 5],
      ["ok", 0],
    ],
  );
  assert.deepEqual(Object.keys(doc.runs[0]).sort(), RUN_KEYS);
  assert.match(r.stderr, /exited 5.*bad|bad.*exited 5/);
});

Deno.test("tyhooks fire names a malformed --task-json field and exits 64", async () => {
  const cases: [string, RegExp][] = [
    ['{"id":"seven"}', /"id"/],
    ["{oops", /--task-json: malformed JSON/],
  ];
  for (const [task, error] of cases) {
    const r = await cli(["fire", "task.done", "--task-json", task, "--plugins-dir", "/none"]);
    assert.equal(r.code, 64);
    assert.match(r.stderr, error);
  }
});

Deno.test("tyhooks fire reads the task from a file and from stdin", async () => {
  const plugins = await pluginsHandling("task.started", {
    p: '#!/bin/sh\necho "$TASK_TITLE" >> "$TASK_PLUGIN_DIR/out"\n',
  });
  const file = join(plugins, "task.json");
  await Deno.writeTextFile(file, TASK);
  assert.equal(
    (await cli(["fire", "task.started", "--task", file, "--plugins-dir", plugins])).code,
    0,
  );
  assert.equal(
    (await cli(["fire", "task.started", "--task", "-", "--plugins-dir", plugins], { stdin: TASK }))
      .code,
    0,
  );
  assert.equal(await Deno.readTextFile(join(plugins, "p", "out")), "Ship it\nShip it\n");
});

Deno.test("tyhooks status-change maps blocked with an error message to task.failed", async () => {
  const plugins = await makeTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.failed: f.sh\n  task.blocked: b.sh\n",
    "p/f.sh": "#!/bin/sh\necho failed\n",
    "p/b.sh": "#!/bin/sh\necho blocked\n",
  });
  const statusChange = async (...args: string[]) =>
    JSON.parse((await cli(["status-change", ...args, "--json", "--plugins-dir", plugins])).stdout);
  assert.equal((await statusChange("blocked", "--message", "Tests ERROR")).event, "task.failed");
  assert.equal((await statusChange("blocked", "--message", "waiting")).event, "task.blocked");
  assert.deepEqual(await statusChange("backlog"), { event: "", runs: [] });
});

Deno.test("tyhooks plugins run prints the output and exits with the action's code", async () => {
  const plugins = await makeTree(actionFiles("sync", {
    push: '#!/bin/sh\necho "out ${TASK_ID-none}"\necho "err" >&2\nexit 3\n',
  }));
  const push = (...flags: string[]) =>
    cli(["plugins", "run", "sync", "push", ...flags, "--plugins-dir", plugins]);
  const r = await push();
  assert.deepEqual([r.code, r.stdout], [3, "out none\n"]);
  assert.match(r.stderr, /err/);
  const withTask = await push("--task-json", TASK, "--json");
  const record = JSON.parse(withTask.stdout);
  assert.deepEqual([withTask.code, record.stdout, record.stderr, record.exit_code], [
    3,
    "out 7\n",
    "err\n",
    3,
  ]);
});

Deno.test("tyhooks plugins run names an unknown plugin or action and exits 64", async () => {
  const plugins = await makeTree(actionFiles("sync", { push: "#!/bin/sh\n" }));
  const plugin = await cli(["plugins", "run", "nope", "push", "--plugins-dir", plugins]);
  assert.equal(plugin.code, 64);
  assert.match(plugin.stderr, /Unknown plugin "nope"/);
  const action = await cli(["plugins", "run", "sync", "pull", "--plugins-dir", plugins]);
  assert.equal(action.code, 64);
  assert.match(action.stderr, /Unknown action "pull" in plugin "sync"/);
});

Deno.test("tyhooks plugins run exits 124 on timeout with the whole process tree gone", async () => {
  const plugins = await makeTree(actionFiles("slow", {
    go:
      '#!/bin/sh\nsleep 30 &\necho $! > "$TASK_PLUGIN_DIR/child"\necho $$ > "$TASK_PLUGIN_DIR/self"\nwait\n',
  }));
  const r = await cli([
    "plugins",
    "run",
    "slow",
    "go",
    "--timeout",
    "300ms",
    "--plugins-dir",
    plugins,
  ]);
  assert.equal(r.code, 124);
  assert.match(r.stderr, /timed out after 300 ms/);
  for (const name of ["child", "self"]) {
    assert.ok(!alive(await readPid(join(plugins, "slow", name))), name);
  }
});

Deno.test("SIGTERM to tyhooks plugins run leaves no process of the script's tree alive", async () => {
  const plugins = await makeTree(actionFiles("p", {
    go: '#!/bin/sh\nsleep 30 &\necho $! > "$TASK_PLUGIN_DIR/child"\nsleep 30\n',
  }));
  const child = spawnCli(["plugins", "run", "p", "go", "--plugins-dir", plugins], {
    stdout: "null",
  });
  const grandchild = await readPid(join(plugins, "p", "child"), 10_000);
  child.kill("SIGTERM");
  const { code } = await child.output();
  assert.equal(code, 143);
  assert.ok(await waitGone(grandchild, 1000), "background child of the action is gone");
});

Deno.test("a hook that prints 300 MB leaves tyhooks' peak memory under 200 MB and its record truncated", async () => {
  const plugins = await makeTree({
    "flood/plugin.yaml": "name: flood\nhooks:\n  task.done: flood.sh\n",
    // The script's parent is tyhooks (setsid execs in place): read its peak RSS after the flood.
    "flood/flood.sh":
      '#!/bin/sh\nhead -c 300000000 /dev/zero\ngrep VmHWM "/proc/$PPID/status" > "$TASK_PLUGIN_DIR/hwm"\n',
  });
  const r = await cli(["fire", "task.done", "--json", "--plugins-dir", plugins]);
  const [run] = JSON.parse(r.stdout).runs;
  assert.deepEqual([run.stdout_bytes, run.stdout_truncated], [300_000_000, true]);
  const kb = Number(/(\d+) kB/.exec(await Deno.readTextFile(join(plugins, "flood", "hwm")))![1]);
  assert.ok(kb < 200 * 1024, `peak RSS ${kb} kB`);
});

Deno.test("tyhooks fire --detach returns at once and the hooks still run in the background", async () => {
  const plugins = await pluginsHandling("task.done", {
    p: '#!/bin/sh\nsleep 0.5\necho "$TASK_ID" > "$TASK_PLUGIN_DIR/ran"\n',
  });
  const cache = await tempDir();
  const r = await cli([
    "fire",
    "task.done",
    "--detach",
    "--task-json",
    TASK,
    "--plugins-dir",
    plugins,
  ], {
    env: { XDG_CACHE_HOME: cache },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, "");
  const ran = join(plugins, "p", "ran");
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline && !(await Deno.stat(ran).catch(() => null))) {
    await new Promise((f) => setTimeout(f, 50));
  }
  assert.equal(await Deno.readTextFile(ran), "7\n");
  assert.ok((await Deno.stat(join(cache, "tyhooks", "detached.log"))).isFile);
});

Deno.test("with the binary's permissions, fire returns once a hook's background child has ended, though its zombie may stay", async () => {
  // The binary cannot read /proc (Deno wants --allow-all for it), and PID 1 here may never reap
  // the ended child's zombie: the runner must still see that nothing is alive and stop waiting.
  const plugins = await pluginsHandling("task.done", {
    z: '#!/bin/sh\necho hi\nsleep 0.3 &\necho $! > "$TASK_PLUGIN_DIR/child"\n',
  });
  const r = await cli(["fire", "task.done", "--json", "--timeout", "5s", "--plugins-dir", plugins]);
  const [run] = JSON.parse(r.stdout).runs;
  // Taking the zombie for a live member would have run this into its timeout.
  assert.deepEqual([run.exit_code, run.timed_out], [0, false], r.stderr);
  assert.ok(!alive(await readPid(join(plugins, "z", "child"))));
});
