import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";
import { pluginsHandling } from "./_trees.ts";

// SPEC "Task input": what event hooks get beyond the base TASK_* variables.

const DUMP = '#!/bin/sh\nenv > "$0.env"\ncat > "$0.stdin"\n';

function envOf(text: string): Map<string, string> {
  return new Map(
    text.split("\n").filter((l) => l.includes("=")).map((l) => {
      const at = l.indexOf("=");
      return [l.slice(0, at), l.slice(at + 1)];
    }),
  );
}

const LEGACY_ONLY = [
  "TASK_TIMESTAMP",
  "WORKTREE_BRANCH",
  "WORKTREE_PORT",
  "TASK_TAGS",
  "TASK_METADATA",
];

/** Runs `tyhooks <args>` on these plugins and legacy hooks dirs; it must exit 0. */
async function run(args: string[], plugins: string, hooks: string): Promise<void> {
  const r = await cli([...args, "--plugins-dir", plugins, "--hooks-dir", hooks]);
  assert.equal(r.code, 0, r.stderr);
}

Deno.test("the legacy hook gets ty's TASK_TIMESTAMP, WORKTREE_BRANCH, WORKTREE_PORT, TASK_TAGS, TASK_METADATA; plugins do not", async () => {
  const plugins = await pluginsHandling("task.done", { p: DUMP });
  const hooks = await makeTree({ "task.done": DUMP });
  const task = {
    id: 9,
    title: "Ship",
    executor: "codex",
    branch_name: "task/9-ship",
    port: 3109,
    tags: "urgent,web",
    metadata: { z: 1, a: { b: "<x>" } },
  };
  const before = Date.now();
  await run(["fire", "task.done", "--task-json", JSON.stringify(task)], plugins, hooks);
  const legacy = envOf(await Deno.readTextFile(join(hooks, "task.done.env")));
  const stamp = legacy.get("TASK_TIMESTAMP")!;
  // Go's time.RFC3339: seconds, then Z or an offset.
  assert.match(stamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(Z|[+-]\d\d:\d\d)$/);
  assert.ok(Math.abs(Date.parse(stamp) - before) < 60_000, stamp);
  assert.equal(legacy.get("WORKTREE_BRANCH"), "task/9-ship");
  assert.equal(legacy.get("WORKTREE_PORT"), "3109");
  assert.equal(legacy.get("TASK_TAGS"), "urgent,web");
  // As Go's json.Marshal writes a map: keys sorted, HTML characters escaped.
  assert.equal(legacy.get("TASK_METADATA"), '{"a":{"b":"\\u003cx\\u003e"},"z":1}');
  assert.equal(legacy.get("TASK_ID"), "9");
  const plugin = envOf(await Deno.readTextFile(join(plugins, "p", "hook.sh.env")));
  for (const name of LEGACY_ONLY) assert.equal(plugin.get(name), undefined, name);
  // ty's events manager gives legacy hooks the executor; its plugin hooks get it only for
  // task.route.
  assert.equal(legacy.get("TASK_EXECUTOR"), "codex");
  assert.equal(plugin.get("TASK_EXECUTOR"), undefined);
});

Deno.test("the legacy hook gets only TASK_TIMESTAMP of those when the task does not say", async () => {
  const hooks = await makeTree({ "task.started": DUMP });
  const task = '{"id":1,"port":0,"tags":"","metadata":{}}';
  await run(["fire", "task.started", "--task-json", task], "/nonexistent", hooks);
  const env = envOf(await Deno.readTextFile(join(hooks, "task.started.env")));
  assert.deepEqual(LEGACY_ONLY.filter((name) => env.has(name)), ["TASK_TIMESTAMP"]);
});

Deno.test("every event hook reads {event,task,message} as one JSON line on stdin, then EOF", async () => {
  const plugins = await pluginsHandling("task.failed", {
    p: '#!/bin/sh\nread -r line\nprintf "%s" "$line" > "$0.line"\ncat > "$0.rest"\n',
  });
  const hooks = await makeTree({ "task.failed": DUMP });
  const task = '{"id":4,"title":"T","metadata":{"k":"v"},"unknown":1}';
  await run(
    ["status-change", "blocked", "--message", "tests fail", "--task-json", task],
    plugins,
    hooks,
  );
  const line = await Deno.readTextFile(join(plugins, "p", "hook.sh.line"));
  const event = JSON.parse(line);
  assert.equal(event.event, "task.failed");
  assert.equal(event.message, "tests fail");
  assert.deepEqual([event.task.id, event.task.title, event.task.metadata], [4, "T", { k: "v" }]);
  assert.equal(event.task.unknown, undefined, "unknown fields are not passed on");
  assert.equal(await Deno.readTextFile(join(plugins, "p", "hook.sh.rest")), "", "then EOF");
  assert.equal(await Deno.readTextFile(join(hooks, "task.failed.stdin")), line + "\n");
});
