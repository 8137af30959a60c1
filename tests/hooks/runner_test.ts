import assert from "node:assert/strict";
import { join } from "node:path";
import { Runner } from "../../lib/hooks/runner.ts";
import { PersistentHooks } from "../../lib/serve/persistent.ts";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { EMPTY_TASK, type Task } from "../../lib/wire/task.ts";
import { NotFoundError } from "../../lib/errors.ts";
import { createLogger } from "../../lib/log.ts";
import { indexOf } from "../_index.ts";
import { makeTree, tempDir } from "../_cli.ts";

const task: Task = {
  ...EMPTY_TASK,
  id: 42,
  title: "Fix the build",
  status: "done",
  project: "web",
  type: "bug",
};
/** A hook writing its cwd and task variables to `<out>/<plugin name>`. */
const dump = (out: string) =>
  `#!/bin/sh\n{ echo "pwd=$(pwd)"; env | grep -E "^(TASK_|WORKTREE_PATH)" | sort; } > "${out}/$TASK_PLUGIN_NAME"\n`;

Deno.test("fire() runs the legacy hook and every plugin's hook concurrently", async () => {
  const sleeper = "#!/bin/sh\nsleep 1\n";
  const index = await indexOf({
    a: { hooks: { "task.done": sleeper } },
    b: { hooks: { "task.done": sleeper } },
  });
  const hooksDir = await makeTree({ "task.done": sleeper });
  const started = performance.now();
  const runs = await new Runner(index, { hooksDir }).fire("task.done", task);
  const elapsed = performance.now() - started;
  assert.equal(runs.length, 3);
  assert.deepEqual(runs.map((r) => r.plugin), [null, "a", "b"]);
  assert.ok(runs.every((r) => r.exit_code === 0));
  // Three 1-second hooks in sequence would take 3 s.
  assert.ok(elapsed < 2500, `took ${elapsed} ms`);
});

Deno.test("fire() gives plugin hooks the task env, plugin name and dir, with cwd = plugin dir", async () => {
  const out = await tempDir();
  const index = await indexOf({ notifier: { hooks: { "task.done": dump(out) } } });
  await new Runner(index).fire("task.done", task, "all green");
  const lines = (await Deno.readTextFile(join(out, "notifier"))).trim().split("\n");
  const dir = index.plugins[0].dir;
  assert.deepEqual(lines, [
    `pwd=${dir}`,
    "TASK_EVENT=task.done",
    "TASK_ID=42",
    "TASK_MESSAGE=all green",
    `TASK_PLUGIN_DIR=${dir}`,
    "TASK_PLUGIN_NAME=notifier",
    "TASK_PROJECT=web",
    "TASK_STATUS=done",
    "TASK_TITLE=Fix the build",
    "TASK_TYPE=bug",
    "WORKTREE_PATH=",
  ]);
});

Deno.test("fire() runs the legacy hook from the hooks dir without plugin variables", async () => {
  const hook = '#!/bin/sh\necho "$(pwd) ${TASK_PLUGIN_NAME-unset} $TASK_EVENT" > out\n';
  const hooksDir = await makeTree({ "task.failed": hook });
  await new Runner({ dir: "", plugins: [], warnings: [] }, { hooksDir }).fire("task.failed", task);
  assert.equal(await Deno.readTextFile(join(hooksDir, "out")), `${hooksDir} unset task.failed\n`);
});

Deno.test("fire() never rejects on failing hooks: it logs them and returns their records", async () => {
  const lines: string[] = [];
  const index = await indexOf({
    crash: { hooks: { "task.done": "#!/bin/sh\necho boom >&2\nexit 7\n" } },
    hang: { hooks: { "task.done": "#!/bin/sh\nexec sleep 30\n" } },
  });
  const log = createLogger({ write: (l) => lines.push(l) });
  const runs = await new Runner(index, { log, timeouts: { event: 200 } }).fire("task.done", task);
  assert.deepEqual(runs.map((r) => [r.plugin, r.exit_code, r.timed_out]), [["crash", 7, false], [
    "hang",
    null,
    true,
  ]]);
  assert.ok(lines.some((l) => l.includes("exited 7") && l.includes("crash") && l.includes("boom")));
  assert.ok(lines.some((l) => l.includes("timed out after 200 ms") && l.includes("hang")));
});

Deno.test("fire() treats an event name as a file name only inside the hooks dir", async () => {
  const hooksDir = await makeTree({ "sub/x": "#!/bin/sh\nexit 0\n" });
  const runs = await new Runner({ dir: "", plugins: [], warnings: [] }, { hooksDir }).fire(
    "sub/x",
    task,
  );
  assert.equal(runs.length, 0);
});

Deno.test("fire() cleans NUL bytes and keeps newlines in task fields", async () => {
  const out = await tempDir();
  const index = await indexOf({
    p: { hooks: { "task.done": `#!/bin/sh\nprintf %s "$TASK_TITLE" > "${join(out, "t")}"\n` } },
  });
  const hostile = { ...task, title: "line one\nline\0two" };
  const [run] = await new Runner(index).fire("task.done", hostile);
  assert.equal(run.error, null);
  assert.equal(await Deno.readTextFile(join(out, "t")), "line one\nlinetwo");
});

Deno.test("onStatusChange() fires the mapped event and nothing for other statuses", async () => {
  const index = await indexOf({ p: { hooks: { "task.failed": "#!/bin/sh\nexit 0\n" } } });
  const runner = new Runner(index);
  const failed = await runner.onStatusChange(task, "blocked", "tests error");
  assert.equal(failed.event, "task.failed");
  assert.equal(failed.runs.length, 1);
  assert.deepEqual(await runner.onStatusChange(task, "archived"), { event: null, runs: [] });
});

Deno.test("runAction() gives task variables only when a task is given", async () => {
  const script = '#!/bin/sh\necho "id=${TASK_ID-unset} plugin=$TASK_PLUGIN_NAME"\n';
  const runner = new Runner(await indexOf({ sync: { actions: { push: script } } }));
  assert.equal((await runner.runAction("sync", "push")).stdout, "id=unset plugin=sync\n");
  assert.equal((await runner.runAction("sync", "push", { task })).stdout, "id=42 plugin=sync\n");
});

Deno.test("runAction() names an unknown plugin or action in a NotFoundError", async () => {
  const runner = new Runner(await indexOf({ sync: { actions: { push: "#!/bin/sh\n" } } }));
  await assert.rejects(
    () => runner.runAction("nope", "push"),
    (e) => e instanceof NotFoundError && /"nope"/.test(e.message),
  );
  await assert.rejects(
    () => runner.runAction("sync", "pull"),
    (e) => e instanceof NotFoundError && /"pull".*"sync"/.test(e.message),
  );
});

Deno.test("persistent hooks: each request line carries an id of its own, as its first key, and a one-shot run gets one too", async () => {
  const echo = '#!/bin/sh\necho $$ >> "$TASK_PLUGIN_DIR/pids"\n' +
    'while IFS= read -r line; do printf \'%s\\n\' "$line" >> "$TASK_PLUGIN_DIR/seen"; ' +
    'id=${line#*\'"id":"\'}; id=${id%%\'"\'*}; echo \'{"id":"\'"$id"\'"}\'; done\n';
  const plugins = await makeTree({
    "p/plugin.yaml":
      "name: p\nhooks:\n  pre_tool_call: g.sh\ntyhooks:\n  pre_tool_call: {persistent: true}\n",
    "p/g.sh": echo,
  });
  const seen = async () =>
    (await Deno.readTextFile(join(plugins, "p", "seen"))).split("\n").filter(Boolean);
  try {
    const index = await loadPlugins(plugins);
    const [plugin] = index.plugins;
    const request = {
      event: "pre_tool_call",
      plugin,
      script: plugin.hooks.pre_tool_call,
      stdin: JSON.stringify({ hook: "pre_tool_call", tool: "ls" }) + "\n",
      timeoutMs: 5000,
      graceMs: 200,
      signal: new AbortController().signal,
    };
    const runner = new Runner(index);
    const hooks = new PersistentHooks();
    try {
      await Promise.all([
        hooks.ask(request, runner.ask.bind(runner)),
        hooks.ask(request, runner.ask.bind(runner)),
      ]);
    } finally {
      await hooks.close();
    }
    await runner.ask(request);
    const lines = await seen();
    assert.equal(lines.length, 3);
    const ids = lines.map((line) => {
      assert.match(line, /^\{"id":"\d+","hook":"pre_tool_call","tool":"ls"\}$/);
      return JSON.parse(line).id;
    });
    assert.notEqual(ids[0], ids[1]);
  } finally {
    await Deno.remove(plugins, { recursive: true });
  }
});
