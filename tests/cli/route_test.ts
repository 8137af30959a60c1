import assert from "node:assert/strict";
import { cli, makeTree, startupMs, tempDir } from "../_cli.ts";
import { groupGone } from "../_procs.ts";
import { pidsIn, pluginsHandling } from "./_trees.ts";
import { hasControl } from "../../lib/text.ts";

const TASK = JSON.stringify({
  id: 5,
  title: "Refactor",
  executor: "claude",
  claude_config_dir: "/p/0",
});

Deno.test("tyhooks route prints the first decision as KEY=VALUE lines, or as JSON", async () => {
  const plugins = await pluginsHandling("task.route", {
    "a-quiet": "#!/bin/sh\necho REASON=only talking\n",
    "b-decides":
      `#!/bin/sh\nprintf 'CLAUDE_CONFIG_DIR="%s-b"\\r\\nDEFER=yes\\r\\nREASON=quota low\\r\\n' "$TASK_CLAUDE_CONFIG_DIR"\n`,
  });
  // SPEC: the task names its own config dir, which ty never routes: --force asks anyway.
  const text = await cli(["route", "--force", "--task-json", TASK, "--plugins-dir", plugins]);
  assert.equal(text.code, 0, text.stderr);
  assert.equal(
    text.stdout,
    "PLUGIN=b-decides\nCLAUDE_CONFIG_DIR=/p/0-b\nHOLD=1\nREASON=quota low\n",
  );
  const json = await cli([
    "route",
    "--json",
    "--force",
    "--task-json",
    TASK,
    "--plugins-dir",
    plugins,
  ]);
  assert.equal(json.code, 0, json.stderr);
  assert.deepEqual(JSON.parse(json.stdout), {
    plugin: "b-decides",
    claude_config_dir: "/p/0-b",
    hold: true,
    reason: "quota low",
  });
});

Deno.test(
  "tyhooks route prints nothing at all when no router decides, and logs the failing one",
  async () => {
    const plugins = await pluginsHandling("task.route", {
      a: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/a\nexit 1\n",
      b: "#!/bin/sh\necho REASON=nothing to say\n",
    });
    const r = await cli(["route", "--force", "--task-json", TASK, "--plugins-dir", plugins]);
    assert.deepEqual([r.code, r.stdout], [0, ""]);
    assert.match(r.stderr, /warn: Router "a" skipped: exited 1/);
    const json = await cli(["route", "--json", "--plugins-dir", plugins]);
    assert.deepEqual(JSON.parse(json.stdout), {
      plugin: "",
      claude_config_dir: "",
      hold: false,
      reason: "",
    });
  },
);

Deno.test("tyhooks route says at info level why no router decided: none handles it, the task is not ty's to route, or none answered", async () => {
  const none = await cli(["route", "--task-json", "{}", "--plugins-dir", await makeTree({})]);
  assert.deepEqual(none, {
    code: 0,
    stdout: "",
    stderr: 'tyhooks: info: No router decided: no plugin handles "task.route"\n',
  });
  const plugins = await pluginsHandling("task.route", {
    a: "#!/bin/sh\necho REASON=nothing to say\n",
    b: "#!/bin/sh\n",
  });
  const task = '{"id":1,"executor":"codex"}';
  const codex = await cli(["route", "--task-json", task, "--plugins-dir", plugins]);
  assert.deepEqual([codex.code, codex.stdout], [0, ""]);
  assert.equal(
    codex.stderr,
    'tyhooks: info: No router decided: the task\'s executor is "codex", not claude ' +
      "(hint: --force asks anyway)\n",
  );
  const asked = await cli(["route", "--json", "--task-json", '{"id":1}', "--plugins-dir", plugins]);
  assert.equal(JSON.parse(asked.stdout).plugin, "");
  assert.equal(
    asked.stderr,
    "tyhooks: info: No router decided: 2 routers asked, none named a config dir or held\n",
  );
});

Deno.test(
  "tyhooks route with three hung routers returns within --timeout + 1 s (all asked at once), their groups gone",
  async () => {
    const trace = await tempDir();
    const hung = `#!/bin/sh\necho $$ > ${trace}/$TASK_PLUGIN_NAME\nsleep 30 &\nexec sleep 30\n`;
    const plugins = await pluginsHandling("task.route", { a: hung, b: hung, c: hung });
    const startup = await startupMs(["route", "--plugins-dir", await makeTree({})]);
    const started = performance.now();
    const r = await cli(["route", "--timeout", "1s", "--plugins-dir", plugins]);
    const elapsed = performance.now() - started;
    assert.deepEqual([r.code, r.stdout], [0, ""]);
    assert.ok(
      elapsed < startup + 2000,
      `returned after ${Math.round(elapsed)} ms, ${Math.round(startup)} of them starting`,
    );
    // SPEC (one consult loop): all three start at once, each with its full timeout.
    assert.match(r.stderr, /Router "c" skipped: timed out after 1000 ms/);
    const pids = await pidsIn(trace, ["a", "b", "c"]);
    assert.ok(pids.length >= 1);
    for (const pid of pids) assert.ok(groupGone(pid), `group ${pid} is gone`);
  },
);

Deno.test("tyhooks route --deadline bounds the whole call below the per-router timeout", async () => {
  const hung = "#!/bin/sh\nexec sleep 30\n";
  const plugins = await pluginsHandling("task.route", {
    a: hung,
    b: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/b\n",
  });
  const startup = await startupMs(["route", "--plugins-dir", await makeTree({})]);
  const started = performance.now();
  const r = await cli(["route", "--timeout", "20s", "--deadline", "1s", "--plugins-dir", plugins]);
  const elapsed = performance.now() - started;
  // SPEC (one consult loop): b answered at once; a, still running at the deadline, counts as not
  // answering, so b's decision stands.
  assert.deepEqual([r.code, r.stdout.split("\n")[0]], [0, "PLUGIN=b"]);
  assert.ok(
    elapsed < startup + 2000,
    `returned after ${Math.round(elapsed)} ms, ${Math.round(startup)} of them starting`,
  );
  assert.match(r.stderr, /Router "a" skipped: did not answer within the 1000 ms deadline/);
});

Deno.test("tyhooks route rejects a bad --deadline with exit 64 naming the flag", async () => {
  const r = await cli(["route", "--deadline", "soon"]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Invalid duration "soon" for flag "--deadline"/);
});

Deno.test("tyhooks route escapes control characters of a reason, and skips a router whose config dir holds one", async () => {
  const plugins = await pluginsHandling("task.route", {
    "a-escape": "#!/bin/sh\nprintf 'CLAUDE_CONFIG_DIR=/p/\\033]0;x\\007\\n'\n",
    "b-reason":
      "#!/bin/sh\nprintf 'CLAUDE_CONFIG_DIR=/p/b\\nREASON=quota \\033[31mlow\\302\\233\\n'\n",
  });
  const args = ["route", "--force", "--task-json", TASK, "--plugins-dir", plugins];
  const [text, json] = await Promise.all([cli(args), cli([...args, "--json"])]);
  const escaped = "PLUGIN=b-reason\nCLAUDE_CONFIG_DIR=/p/b\nREASON=quota \\x1b[31mlow\\x9b\n";
  assert.deepEqual([text.code, text.stdout], [0, escaped]);
  const skipped =
    /Router "a-escape" skipped: its CLAUDE_CONFIG_DIR "\/p\/\\u001b\]0;x\\u0007" holds a/;
  assert.match(text.stderr, skipped);
  assert.ok(!hasControl(json.stdout.trimEnd()), json.stdout);
  assert.equal(JSON.parse(json.stdout).reason, "quota \x1b[31mlow\u009b");
});
