import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";
import { pluginsHandling } from "./_trees.ts";

// Linux refuses to exec with one environment string over 128 KiB: TASK_TITLE is cut to 64 KiB.
const HUGE_TASK = JSON.stringify({ id: 1, title: "t".repeat(200 * 1024), executor: "claude" });

Deno.test("tyhooks route still gets a router's HOLD for a task with a 200 KiB title", async () => {
  const plugins = await pluginsHandling("task.route", {
    r: '#!/bin/sh\necho HOLD=1\necho "REASON=${#TASK_TITLE}"\n',
  });
  const r = await cli(["route", "--json", "--task", "-", "--plugins-dir", plugins], {
    stdin: HUGE_TASK,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    plugin: "r",
    claude_config_dir: "",
    hold: true,
    reason: String(64 * 1024),
  });
});

Deno.test("tyhooks fire runs the hooks of a task with a 200 KiB title, legacy hook included", async () => {
  const plugins = await pluginsHandling("task.done", {
    p: '#!/bin/sh\necho "${#TASK_TITLE}" > "$TASK_PLUGIN_DIR/len"\n',
  });
  const hooks = await makeTree({ "task.done": "#!/bin/sh\nexit 0\n" });
  const dirs = ["--plugins-dir", plugins, "--hooks-dir", hooks];
  const r = await cli(["fire", "task.done", "--json", "--task", "-", ...dirs], {
    stdin: HUGE_TASK,
  });
  assert.equal(r.code, 0, r.stderr);
  const runs = JSON.parse(r.stdout).runs;
  assert.deepEqual(
    runs.map((x: { error: unknown; exit_code: number }) => [x.error, x.exit_code]),
    [
      [null, 0],
      [null, 0],
    ],
  );
  assert.equal(await Deno.readTextFile(join(plugins, "p", "len")), `${64 * 1024}\n`);
});
