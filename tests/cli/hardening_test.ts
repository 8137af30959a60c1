/** Hostile input and signals at the edges of the CLI. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, spawnCli } from "../_cli.ts";
import { actionFiles, pluginsHandling } from "./_trees.ts";
import { readPid, waitGone } from "../_procs.ts";

Deno.test("a --task that is a device is a usage error, not an out-of-memory death", async () => {
  // Devices are refused before they are opened (SPEC "Trust boundaries"); the 1 MiB cap on a
  // regular file is tested in tests/read_bounded_test.ts.
  const r = await cli(["fire", "x", "--task", "/dev/zero", "--plugins-dir", "/nonexistent"]);
  assert.equal(r.code, 64);
  assert.match(
    r.stderr,
    /Cannot read --task "\/dev\/zero": not a regular file \(a character device\)/,
  );
});

Deno.test("SIGTERM while tyhooks waits for --task - on stdin exits 143 at once", async () => {
  const child = spawnCli(["fire", "x", "--task", "-", "--plugins-dir", "/nonexistent"], {
    stdin: "piped",
  });
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode('{"id":'));
  await new Promise((resolve) => setTimeout(resolve, 500));
  child.kill("SIGTERM");
  const { code, stdout, stderr } = await child.output();
  await writer.close().catch(() => {});
  assert.equal(code, 143);
  assert.equal(stdout.length, 0);
  // Deno reports 143 for any death by SIGTERM: the message shows that tyhooks handled it.
  assert.match(new TextDecoder().decode(stderr), /Interrupted by SIGTERM/);
});

Deno.test("SIGHUP to tyhooks fire ends its hooks too and exits 129", async () => {
  const plugins = await pluginsHandling("task.done", {
    h: '#!/bin/sh\necho $$ > "$TASK_PLUGIN_DIR/pid"\nexec sleep 30\n',
  });
  const child = spawnCli(["fire", "task.done", "--plugins-dir", plugins]);
  const hook = await readPid(join(plugins, "h", "pid"), 10_000);
  child.kill("SIGHUP");
  assert.equal((await child.output()).code, 129);
  assert.ok(await waitGone(hook, 1000), "the hook was terminated");
});

Deno.test("an interrupted tool pre prints no verdict, even under --on-failure allow", async () => {
  const plugins = await pluginsHandling("pre_tool_call", {
    g: '#!/bin/sh\necho $$ > "$TASK_PLUGIN_DIR/pid"\nexec sleep 30\n',
  });
  const child = spawnCli([
    "tool",
    "pre",
    "--tool",
    "bash",
    "--on-failure",
    "allow",
    "--plugins-dir",
    plugins,
  ]);
  const guard = await readPid(join(plugins, "g", "pid"), 10_000);
  child.kill("SIGTERM");
  const { code, stdout, stderr } = await child.output();
  assert.equal(code, 143);
  assert.equal(new TextDecoder().decode(stdout), "");
  // 143 alone would not show it: Deno reports it for any death by SIGTERM.
  assert.match(new TextDecoder().decode(stderr), /failed: Interrupted/);
  assert.ok(await waitGone(guard, 1000), "the guard was terminated");
});

Deno.test("a relative --hooks-dir still runs the legacy hook", async () => {
  const cwd = await makeTree({ "lh/task.done": "#!/bin/sh\necho legacy\n" });
  const args = [
    "fire",
    "task.done",
    "--hooks-dir",
    "lh",
    "--plugins-dir",
    "/nonexistent",
    "--json",
  ];
  const r = await cli(args, { cwd });
  const [run] = JSON.parse(r.stdout).runs;
  assert.deepEqual([run.script, run.exit_code, run.error], [join(cwd, "lh", "task.done"), 0, null]);
});

Deno.test("a duration past what a timer can hold is a usage error, not an instant timeout", async () => {
  const r = await cli(["fire", "x", "--timeout", "36000m", "--plugins-dir", "/nonexistent"]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Invalid duration "36000m" for flag "--timeout"/);
});

Deno.test("an action killed by a signal exits 128 + n and says so", async () => {
  const plugins = await makeTree(actionFiles("k", { die: "#!/bin/sh\nkill -9 $$\n" }));
  const r = await cli(["plugins", "run", "k", "die", "--plugins-dir", plugins]);
  assert.equal(r.code, 137);
  assert.match(r.stderr, /killed by SIGKILL/);
});

Deno.test("with --log-format json even a usage error is one JSON object on stderr", async () => {
  const r = await cli(["--log-format", "json", "fire", "x", "--bogus"]);
  assert.equal(r.code, 64);
  const lines = r.stderr.trim().split("\n");
  assert.equal(lines.length, 1);
  assert.equal(JSON.parse(lines[0]).msg, 'Unknown flag "--bogus"');
});

Deno.test("tyhooks plugins --help lists the plugins commands; no command at all is a usage error", async () => {
  const group = await cli(["plugins", "--help"]);
  assert.equal(group.code, 0);
  assert.match(group.stdout, /plugins validate/);
  const none = await cli([]);
  assert.equal(none.code, 64);
  assert.equal(none.stdout, "");
  assert.match(none.stderr, /Usage: tyhooks/);
});

Deno.test("without $HOME, route still answers when the dirs are given (the index cache is skipped)", async () => {
  const plugins = await pluginsHandling("task.route", {
    r: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p\n",
  });
  // XDG_CACHE_HOME emptied too: inherited, it would name a cache dir after all (the real one).
  const out = await cli(["route", "--plugins-dir", plugins, "--hooks-dir", plugins], {
    env: { HOME: "", XDG_CACHE_HOME: "" },
  });
  assert.equal(out.code, 0, out.stderr);
  assert.match(out.stdout, /CLAUDE_CONFIG_DIR=\/p/);
});

Deno.test("a relative XDG_CONFIG_HOME is refused with a message, as Go's os.UserConfigDir does", async () => {
  const r = await cli(["plugins", "dir"], {
    env: { XDG_CONFIG_HOME: "relative/cfg", TY_PLUGINS_DIR: "" },
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /\$XDG_CONFIG_HOME: "relative\/cfg" is a relative path/);
});

Deno.test("control characters in a manifest never reach plugins list's output", async () => {
  const plugins = await makeTree({
    "p/plugin.yaml": [
      "name: p",
      'description: "ok\\u0000\\u001b[31mred"',
      "hooks:",
      '  "task.done\\u0000": h.sh',
      "  task.failed: h.sh",
      "actions:",
      '  - id: "sy\\u0007nc"',
      "    command: h.sh",
      "",
    ].join("\n"),
    "p/h.sh": "#!/bin/sh\n",
  });
  const r = await cli(["plugins", "list", "--json", "--plugins-dir", plugins]);
  assert.equal(r.code, 0, r.stderr);
  // deno-lint-ignore no-control-regex -- looking for exactly these characters
  assert.ok(!/[\u0000-\u0008\u001b]/.test(r.stdout), "no raw control characters on stdout");
  const [plugin] = JSON.parse(r.stdout).plugins;
  assert.equal(plugin.description, "ok[31mred");
  assert.deepEqual(Object.keys(plugin.hooks), ["task.failed"]);
  assert.deepEqual(plugin.actions, []);
  assert.match(r.stdout + r.stderr, /control characters/);
});

Deno.test("tyhooks plugins run passes binary output through byte for byte, all of it; --json caps it", async () => {
  const plugins = await makeTree(actionFiles("b", {
    bin: "#!/bin/sh\nprintf '\\377\\376\\000abc'\n",
    big: "#!/bin/sh\nhead -c 2000000 /dev/zero\n",
  }));
  const child = spawnCli(["plugins", "run", "b", "bin", "--plugins-dir", plugins]);
  const out = await child.output();
  assert.deepEqual([...out.stdout], [0xff, 0xfe, 0x00, 0x61, 0x62, 0x63]);
  // Streamed as it comes: nothing is held back, so nothing is cut.
  const big = await cli(["plugins", "run", "b", "big", "--plugins-dir", plugins]);
  assert.equal(big.code, 0);
  assert.equal(big.stdout.length, 2_000_000);
  assert.equal(big.stderr, "");
  const json = await cli(["plugins", "run", "b", "big", "--json", "--plugins-dir", plugins]);
  assert.equal(json.code, 0);
  const record = JSON.parse(json.stdout);
  assert.equal(record.stdout.length, 1024 * 1024);
  assert.equal(record.stdout_truncated, true);
  assert.match(json.stderr, /stdout truncated/);
});

Deno.test("tyhooks fire takes an event named like an object property (toString) as any other", async () => {
  const plugins = await pluginsHandling("task.done", { p: "#!/bin/sh\n" });
  const r = await cli(["fire", "toString", "--json", "--plugins-dir", plugins]);
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { event: "toString", runs: [] });
});

Deno.test("control characters in service and workflow names never reach plugins list", async () => {
  const plugins = await makeTree({
    "p/plugin.yaml":
      'name: p\nservices:\n  - name: "ev\\u001bil"\n    command: "true"\n  - name: ok\n    command: "true"\n',
    "p/workflows/x\u001b[31m.yaml": "",
    "p/workflows/fine.yaml": "",
  });
  const r = await cli(["plugins", "list", "--json", "--plugins-dir", plugins]);
  assert.equal(r.code, 0, r.stderr);
  assert.ok(!r.stdout.includes("\u001b"));
  const [plugin] = JSON.parse(r.stdout).plugins;
  assert.deepEqual(plugin.services.map((s: { name: string }) => s.name), ["ok"]);
  assert.deepEqual(plugin.workflows, ["fine"]);
});
