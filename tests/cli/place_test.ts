import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, startupMs, tempDir } from "../_cli.ts";
import { groupGone, readPid, waitGone } from "../_procs.ts";
import { assertPlaced, pluginsHandling } from "./_trees.ts";

const TASK = JSON.stringify({ id: 8, title: "Build", project: "web", repo_path: "/src/web" });

Deno.test("tyhooks place prints the first named target with its handler", async () => {
  const plugins = await pluginsHandling("task.placement", {
    a: `#!/bin/sh\necho '{"target":"","reason":"local is fine"}'\n`,
    b: `#!/bin/sh\nid=$(cat | sed 's/.*"id":\\([0-9]*\\).*/\\1/')\necho "{\\"target\\":\\"gpu-$id\\",\\"workdir\\":\\"~/w\\"}"\n`,
  });
  const r = await cli(["place", "--task-json", TASK, "--plugins-dir", plugins]);
  assertPlaced(r, { target: "gpu-8", workdir: "~/w", handler: "b" });
});

Deno.test("tyhooks place with no handler prints the all-empty answer", async () => {
  const plugins = await makeTree({});
  const r = await cli(["place", "--plugins-dir", plugins]);
  assertPlaced(r, {});
});

Deno.test(
  "tyhooks place --remote-required exits 3 without a target, and tells the handlers",
  async () => {
    const trace = await tempDir();
    const plugins = await pluginsHandling("task.placement", {
      a: `#!/bin/sh\ncat > ${trace}/request\necho '{"target":"","reason":"no host free"}'\n`,
      b: "#!/bin/sh\necho '{not json'\n",
    });
    const r = await cli([
      "place",
      "--remote-required",
      "--task-json",
      TASK,
      "--plugins-dir",
      plugins,
    ]);
    assertPlaced(r, { reason: "no host free", handler: "a" }, 3);
    assert.match(r.stderr, /error: Placement handler "b" failed: malformed JSON/);
    assert.match(r.stderr, /--remote-required/);
    const request = JSON.parse(await Deno.readTextFile(join(trace, "request")));
    assert.equal(request.task.remote_required, true);
    const none = await cli(["place", "--remote-required", "--plugins-dir", await makeTree({})]);
    assertPlaced(none, {}, 3);
  },
);

Deno.test(
  "tyhooks place keeps an answer whose background probe holds stdout and returns within its deadline + 1 s past a setsid escape",
  async () => {
    const trace = await tempDir();
    const plugins = await pluginsHandling("task.placement", {
      a: `#!/bin/sh\nsetsid sh -c 'echo $$ > ${trace}/escapee; exec sleep 5' &\nexec sleep 30\n`,
      b: `#!/bin/sh\necho '{"target":"h2"}'\nsleep 30 &\necho $! > ${trace}/probe\necho $$ > ${trace}/b\n`,
    });
    const startup = await startupMs(["place", "--plugins-dir", await makeTree({})]);
    const started = performance.now();
    const r = await cli([
      "place",
      "--deadline",
      "1500ms",
      "--timeout",
      "600ms",
      "--plugins-dir",
      plugins,
    ]);
    const elapsed = performance.now() - started;
    Deno.kill(await readPid(join(trace, "escapee")), "SIGKILL");
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).target, "h2");
    assert.ok(
      elapsed < startup + 2500,
      `returned after ${Math.round(elapsed)} ms, ${Math.round(startup)} of them starting`,
    );
    assert.match(r.stderr, /Placement handler "a" failed: timed out after 600 ms/);
    assert.ok(await waitGone(await readPid(join(trace, "probe")), 1000));
    assert.ok(groupGone(await readPid(join(trace, "b"))));
  },
);
