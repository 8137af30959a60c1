import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";
import { pluginsHandling } from "./_trees.ts";
import { alive, BASH, readPid } from "../_procs.ts";

// SPEC "How every script runs": notified hooks run until their group is empty, never past the
// timeout; the call returns no later than timeout + grace + 100 ms.
const GRACE_MS = 500;
const DRAIN_MS = 100;

/** `tyhooks fire task.done --json <flags>` with one plugin, n, running `script`; n's dir. */
async function fireOne(script: string, flags: string[] = []) {
  const plugins = await pluginsHandling("task.done", { n: script });
  const r = await cli(["fire", "task.done", "--json", ...flags, "--plugins-dir", plugins]);
  return { r, dir: join(plugins, "n") };
}

Deno.test("tyhooks fire returns after a hook's ( sleep 1; echo done > F ) & has written F", async () => {
  const { r, dir } = await fireOne(
    '#!/bin/sh\n( sleep 1; echo done > "$TASK_PLUGIN_DIR/F" ) &\nexit 0\n',
  );
  assert.equal(r.code, 0, r.stderr);
  assert.equal(await Deno.readTextFile(join(dir, "F")), "done\n");
  const [run] = JSON.parse(r.stdout).runs;
  assert.deepEqual([run.exit_code, run.timed_out], [0, false]);
});

Deno.test("tyhooks fire --timeout 2s ends a hook's sleep 60 & by the time it returns, within the bound", async () => {
  const { r, dir } = await fireOne(
    '#!/bin/sh\nsleep 60 >/dev/null 2>&1 &\necho $! > "$TASK_PLUGIN_DIR/child"\nexit 0\n',
    ["--timeout", "2s"],
  );
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!alive(await readPid(join(dir, "child"))), "sleep 60 is dead");
  const [run] = JSON.parse(r.stdout).runs;
  assert.deepEqual([run.exit_code, run.timed_out], [0, true]);
  assert.ok(run.duration_ms <= 2000 + GRACE_MS + DRAIN_MS, `took ${run.duration_ms} ms`);
  assert.match(r.stderr, /timed out after 2000 ms/);
});

Deno.test("tyhooks status-change, tool post and plugins run also wait for the hook's background work", async () => {
  const late = '#!/bin/sh\n( sleep 0.5; echo done > "$TASK_PLUGIN_DIR/$1" ) &\nexit 0\n';
  const plugins = await makeTree({
    "n/plugin.yaml": [
      "name: n",
      "hooks:",
      "  task.started: started.sh",
      "  post_tool_call: post.sh",
      "actions:",
      "  - id: go",
      "    command: go.sh",
      "",
    ].join("\n"),
    "n/started.sh": late.replace("$1", "started"),
    "n/post.sh": late.replace("$1", "post"),
    "n/go.sh": late.replace("$1", "go"),
  });
  const dir = ["--plugins-dir", plugins];
  assert.equal((await cli(["status-change", "queued", ...dir])).code, 0);
  assert.equal((await cli(["tool", "post", "--tool", "bash", ...dir])).code, 0);
  assert.equal((await cli(["plugins", "run", "n", "go", ...dir])).code, 0);
  for (const name of ["started", "post", "go"]) {
    assert.equal(await Deno.readTextFile(join(plugins, "n", name)), "done\n", name);
  }
});

Deno.test({
  name:
    "with the binary's permissions, a hook's timeout also ends a child it moved to its own group",
  ignore: BASH === undefined,
  async fn() {
    // The binary cannot read /proc: the session's strays are found through ps.
    const { r, dir } = await fireOne(
      `#!${BASH}\nset -m\nsleep 60 &\necho $! > "$TASK_PLUGIN_DIR/stray"\nsleep 60\n`,
      ["--timeout", "1s"],
    );
    const [run] = JSON.parse(r.stdout).runs;
    assert.equal(run.timed_out, true, r.stderr);
    assert.ok(!alive(await readPid(join(dir, "stray"))), "the set -m child is dead");
  },
});
