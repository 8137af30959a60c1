/**
 * Trying one hook while writing it: `fire --plugin` and `--show-output`, and the warnings for
 * event names and statuses that look like typos.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";
import { TWINS } from "./_trees.ts";

const ENV = { TYHOOKS_NO_CACHE: "1" };

// Two plugins and a legacy hook for task.done, each leaving a marker file when it runs.
const TREE = {
  "plugins/alpha/plugin.yaml": "name: alpha\nhooks:\n  task.done: done.sh\n",
  "plugins/alpha/done.sh":
    '#!/bin/sh\ntouch ../../ran-alpha\necho "alpha says $TASK_ID"\necho "alpha warns" >&2\n',
  "plugins/beta/plugin.yaml": "name: beta\nhooks:\n  task.done: done.sh\n",
  "plugins/beta/done.sh": "#!/bin/sh\ntouch ../../ran-beta\n",
  "hooks/task.done": "#!/bin/sh\ntouch ../ran-legacy\n",
};

async function withTree(fn: (dir: string, args: string[]) => Promise<void>): Promise<void> {
  const dir = await makeTree(TREE);
  await fn(dir, ["--plugins-dir", join(dir, "plugins"), "--hooks-dir", join(dir, "hooks")]);
}

async function ran(dir: string): Promise<string[]> {
  const names: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    if (entry.name.startsWith("ran-")) names.push(entry.name.slice(4));
  }
  return names.sort();
}

Deno.test("fire with $HOME unset runs the plugins --plugins-dir names, and says the legacy hooks dir is unknown", async () => {
  await withTree(async (dir) => {
    const r = await cli(["fire", "task.done", "--plugins-dir", join(dir, "plugins")], {
      env: ENV,
      wrap: ["env", "-u", "HOME", "-u", "XDG_CONFIG_HOME"],
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await ran(dir), ["alpha", "beta"]);
    assert.match(r.stderr, /No legacy hooks dir: Cannot find the home directory/);
  });
});

Deno.test("fire --plugin runs only the named plugins' hooks; legacy names the legacy hook", async () => {
  await withTree(async (dir, dirs) => {
    const one = await cli(["fire", "task.done", "--plugin", "alpha", ...dirs], { env: ENV });
    assert.equal(one.code, 0, one.stderr);
    assert.deepEqual(await ran(dir), ["alpha"]);
    const two = await cli(
      ["fire", "task.done", "--plugin", "beta", "--plugin", "legacy", ...dirs],
      { env: ENV },
    );
    assert.equal(two.code, 0, two.stderr);
    assert.deepEqual(await ran(dir), ["alpha", "beta", "legacy"]);
  });
});

Deno.test("fire without --plugin runs every hook (control)", async () => {
  await withTree(async (dir, dirs) => {
    const r = await cli(["fire", "task.done", ...dirs], { env: ENV });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(await ran(dir), ["alpha", "beta", "legacy"]);
  });
});

Deno.test("fire --plugin with a plugin that is not installed is a usage error with a did-you-mean", async () => {
  await withTree(async (dir, dirs) => {
    const r = await cli(["fire", "task.done", "--plugin", "alpah", ...dirs], { env: ENV });
    assert.equal(r.code, 64);
    assert.match(
      r.stderr,
      /Unknown plugin "alpah" for flag "--plugin"\nhint: did you mean "alpha"\?/,
    );
    assert.deepEqual(await ran(dir), []);
  });
});

Deno.test("fire --show-output prints each hook's stdout and stderr under a header naming it", async () => {
  await withTree(async (dir, dirs) => {
    const r = await cli(
      [
        "fire",
        "task.done",
        "--plugin",
        "alpha",
        "--show-output",
        "--task-json",
        '{"id":42}',
        ...dirs,
      ],
      { env: ENV },
    );
    assert.equal(r.code, 0, r.stderr);
    const script = join(dir, "plugins", "alpha", "done.sh");
    assert.equal(
      r.stdout,
      `==> plugin "alpha": ${script} (exit 0) <==\n--- stdout:\nalpha says 42\n--- stderr:\nalpha warns\n`,
    );
    const json = await cli(
      ["fire", "task.done", "--plugin", "alpha", "--show-output", "--json", ...dirs],
      { env: ENV },
    );
    assert.equal(JSON.parse(json.stdout).runs[0].stdout, "alpha says 0\n"); // The empty task: id 0.
  });
});

Deno.test("status-change takes --plugin and --show-output too", async () => {
  await withTree(async (dir, dirs) => {
    const r = await cli(["status-change", "done", "--plugin", "beta", "--show-output", ...dirs], {
      env: ENV,
    });
    assert.equal(r.code, 0, r.stderr);
    assert.match(
      r.stdout,
      /^==> plugin "beta": .*done\.sh \(exit 0\) <==\n--- stdout: \(empty\)\n/,
    );
    assert.deepEqual(await ran(dir), ["beta"]);
  });
});

Deno.test("an event or status close to a known one is warned about with a did-you-mean, and used as given", async () => {
  await withTree(async (dir, dirs) => {
    const event = await cli(["fire", "task.doen", ...dirs], { env: ENV });
    assert.equal(event.code, 0);
    assert.match(event.stderr, /Unknown event "task\.doen": did you mean "task\.done"\?/);
    const status = await cli(["status-change", "Done", ...dirs], { env: ENV });
    assert.equal(status.code, 0);
    assert.match(status.stderr, /Unknown status "Done": did you mean "done"\?/);
    assert.deepEqual(await ran(dir), []);
    // Known names and unrelated ones pass silently.
    const custom = await cli(["fire", "deploy.finished", ...dirs], { env: ENV });
    assert.doesNotMatch(custom.stderr, /did you mean/);
    // A name holding an escape sequence is quoted as every value is, the same in each line.
    const odd = await cli(["status-change", "do\x1bne", ...dirs], { env: ENV });
    assert.equal(
      odd.stderr,
      'tyhooks: warn: Unknown status "do\\u001bne": did you mean "done"? ' +
        '(hint="the status is used as given")\n' +
        'tyhooks: info: Status "do\\u001bne" fires no event\n',
    );
  });
});

Deno.test("fire runs 200 hooks under ulimit -n 256: at most 32 at once, so none fails to start", async () => {
  const files: Record<string, string> = {};
  for (let i = 0; i < 200; i++) {
    files[`h${i}/plugin.yaml`] = `name: h${i}\nhooks:\n  task.done: h.sh\n`;
    files[`h${i}/h.sh`] = '#!/bin/sh\necho ok > "$TASK_PLUGIN_DIR/ran"\n';
  }
  const dir = await makeTree(files);
  const r = await cli(["fire", "task.done", "--json", "--plugins-dir", dir], {
    env: ENV,
    wrap: ["sh", "-c", 'ulimit -n 256 && exec "$@"', "sh"],
  });
  assert.equal(r.code, 0, r.stderr);
  const runs = JSON.parse(r.stdout).runs as { exit_code: number; error: string | null }[];
  assert.equal(runs.length, 200);
  assert.deepEqual(runs.filter((run) => run.exit_code !== 0 || run.error !== null), []);
});

Deno.test("fire runs the hooks of both plugins that share a name, as ty does", async () => {
  const plugins = await makeTree(TWINS);
  const r = await cli(["fire", "task.done", "--show-output", "--plugins-dir", plugins], {
    env: ENV,
  });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /done in a\n/);
  assert.match(r.stdout, /done in b\/twin\n/);
});

Deno.test("fire and status-change say in one info line on stderr how many hooks ran and how many failed", async () => {
  const dir = await makeTree({
    ...TREE,
    "plugins/gamma/plugin.yaml": "name: gamma\nhooks:\n  task.done: done.sh\n",
    "plugins/gamma/done.sh": "#!/bin/sh\nexit 3\n",
  });
  const dirs = ["--plugins-dir", join(dir, "plugins"), "--hooks-dir", join(dir, "hooks")];
  const fired = await cli(["fire", "task.done", ...dirs], { env: ENV });
  assert.equal(fired.code, 0, fired.stderr);
  assert.match(fired.stderr, /^tyhooks: info: "task\.done": 4 hooks ran, 1 failed$/m);
  const one = await cli(["fire", "task.done", "--plugin", "beta", ...dirs], { env: ENV });
  assert.equal(one.stderr, 'tyhooks: info: "task.done": 1 hook ran\n');
  const none = await cli(["fire", "deploy.finished", "--json", ...dirs], { env: ENV });
  assert.deepEqual(none, {
    code: 0,
    stdout: '{"event":"deploy.finished","runs":[]}\n',
    stderr: 'tyhooks: info: No hook handles "deploy.finished"\n',
  });
  const status = await cli(["status-change", "done", "--plugin", "alpha", ...dirs], { env: ENV });
  assert.equal(status.stderr, 'tyhooks: info: "task.done": 1 hook ran\n');
});

Deno.test("fire gives each hook of an event its own timeout setting; --timeout replaces them all", async () => {
  const ownTimeout = "tyhooks:\n  task.done: {timeout: 300ms}\n";
  const dir = await makeTree({
    "plugins/slow/plugin.yaml": `name: slow\nhooks:\n  task.done: slow.sh\n${ownTimeout}`,
    "plugins/slow/slow.sh": "#!/bin/sh\nexec sleep 30\n",
    "plugins/quick/plugin.yaml": "name: quick\nhooks:\n  task.done: quick.sh\n",
    "plugins/quick/quick.sh": "#!/bin/sh\nexec sleep 2\n",
    "hooks/task.done": "#!/bin/sh\nexec sleep 2\n",
  });
  const dirs = ["--plugins-dir", join(dir, "plugins"), "--hooks-dir", join(dir, "hooks")];
  const fire = (...args: string[]) =>
    cli(["fire", "task.done", "--json", ...dirs, ...args], { env: ENV });
  const timedOut = (r: { stdout: string }) =>
    (JSON.parse(r.stdout).runs as { plugin: string | null; timed_out: boolean }[])
      .map((run) => [run.plugin, run.timed_out]);
  // The legacy hook and quick keep the event's 30 s, and finish their 2 s.
  const own = await fire();
  assert.deepEqual(timedOut(own), [[null, false], ["quick", false], ["slow", true]]);
  assert.match(own.stderr, /failed: timed out after 300 ms \(plugin=slow /);
  const explicit = await fire("--timeout", "500ms");
  assert.deepEqual(timedOut(explicit), [[null, true], ["quick", true], ["slow", true]]);
  assert.match(explicit.stderr, /failed: timed out after 500 ms \(plugin=slow /);
});

Deno.test("fire bounds whatever it fires as an event, a tool event too, and --timeout sets that bound", async () => {
  const plugins = await makeTree({
    "p/plugin.yaml": "name: p\nhooks:\n  post_tool_call: h.sh\n",
    "p/h.sh": "#!/bin/sh\nexec sleep 30\n",
  });
  const r = await cli(
    [
      "fire",
      "post_tool_call",
      "--timeout",
      "500ms",
      "--plugins-dir",
      plugins,
      "--hooks-dir",
      plugins,
    ],
    { env: ENV },
  );
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Hook for "post_tool_call" failed: timed out after 500 ms/);
});
