import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, NOOP_SCRIPT } from "../_cli.ts";

// `tyhooks plugins validate [flags] --plugins-dir <root>`.
function validate(root: string, ...flags: string[]) {
  return cli(["plugins", "validate", ...flags, "--plugins-dir", root]);
}

// What `plugins list` says on stderr as it loads `root`: nothing when loading lets it all pass.
async function loadingSays(root: string): Promise<string> {
  return (await cli(["plugins", "list", "--plugins-dir", root])).stderr;
}

Deno.test("plugins validate exits 1 and prints path:line:col for broken YAML", async () => {
  const root = await makeTree({
    "good/plugin.yaml": "name: good\nhooks:\n  task.done: a.sh\n",
    "good/a.sh": NOOP_SCRIPT,
    "broken/plugin.yaml": "name: broken\nhooks: [a.sh\n",
  });
  const result = await validate(root);
  assert.equal(result.code, 1);
  assert.equal(
    result.stdout,
    `${join(root, "broken/plugin.yaml")}:3:1: Skipped plugin in "broken": invalid YAML: ` +
      "Flow sequence in block collection must be sufficiently indented and end with a ]\n",
  );
});

Deno.test("plugins validate reports the unknown key hook: that loading ignores", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nhook:\n  task.done: a.sh\nactions:\n  - id: a\n    command: a.sh\n",
    "p/a.sh": NOOP_SCRIPT,
  });
  assert.equal(await loadingSays(root), "", "loading ignores unknown keys silently");
  const result = await validate(root);
  assert.equal(result.code, 1);
  assert.equal(
    result.stdout,
    `${join(root, "p/plugin.yaml")}:2:1: Unknown key "hook": did you mean "hooks"?\n`,
  );
});

Deno.test("plugins validate reports an event beside hooks: once, as the loader words it", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\npre_tool_call: a.sh\n",
    "p/a.sh": NOOP_SCRIPT,
  });
  const result = await validate(root);
  assert.equal(result.code, 1);
  assert.equal(
    result.stdout,
    `${join(root, "p/plugin.yaml")}:4:1: Dropped hook "pre_tool_call": it is outside "hooks:" ` +
      '(hint: indent it under "hooks:")\n',
  );
});

Deno.test("plugins validate exits 0 with an ok line on a clean dir", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nversion: 0.1.0\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": NOOP_SCRIPT,
  });
  const result = await validate(root);
  assert.deepEqual(result, {
    code: 0,
    stdout: `ok: 1 plugin in ${JSON.stringify(root)}\n`,
    stderr: "",
  });
});

Deno.test("plugins validate --json prints ok and the problems", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nversion: 1.10\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": NOOP_SCRIPT,
  });
  const result = await validate(root, "--json");
  assert.equal(result.code, 1);
  assert.deepEqual(JSON.parse(result.stdout), {
    ok: false,
    problems: [{
      plugin: "p",
      path: join(root, "p/plugin.yaml"),
      line: 2,
      column: 10,
      message: '"version" must be a string, not a number',
    }],
  });
  const clean = await validate(join(root, "none"), "--json");
  assert.equal(clean.code, 0);
  assert.deepEqual(JSON.parse(clean.stdout), { ok: true, problems: [] });
});

Deno.test("plugins validate PATH lints one plugin folder, or its plugin.yaml: each problem, exit 1", async () => {
  const repo = await makeTree({
    "plugin.yaml":
      "name: mine\nhook:\n  task.done: a.sh\nactions:\n  - id: go\n    command: gone.sh\n",
    "a.sh": NOOP_SCRIPT,
  });
  const manifest = join(repo, "plugin.yaml");
  for (const path of [repo, manifest]) {
    const result = await cli(["plugins", "validate", path, "--plugins-dir", join(repo, "none")]);
    assert.equal(result.code, 1, result.stdout);
    const lines = result.stdout.trimEnd().split("\n");
    assert.ok(lines.every((l) => l.startsWith(`${manifest}:`)), result.stdout);
    assert.ok(lines.some((l) => l.includes('Unknown key "hook": did you mean "hooks"?')));
    assert.ok(lines.some((l) => l.includes('"gone.sh" does not exist')));
  }
  const json = await cli(["plugins", "validate", repo, "--json"]);
  assert.equal(json.code, 1);
  assert.equal(JSON.parse(json.stdout).ok, false);
});

Deno.test("plugins validate PATH of a collection lints every plugin in it; a clean one exits 0", async () => {
  const collection = await makeTree({
    "one/plugin.yaml": "name: one\nhooks:\n  task.done: a.sh\n",
    "one/a.sh": NOOP_SCRIPT,
    "team/two/plugin.yaml": "name: two\nhooks:\n  task.done: a.sh\n",
    "team/two/a.sh": NOOP_SCRIPT,
  });
  const result = await cli(["plugins", "validate", collection]);
  assert.deepEqual(result, {
    code: 0,
    stdout: `ok: 2 plugins in ${JSON.stringify(collection)}\n`,
    stderr: "",
  });
});

Deno.test("plugins validate PATH that does not exist is a usage error; one with no plugin fails", async () => {
  const empty = await makeTree({ "README.md": "nothing\n" });
  const missing = await cli(["plugins", "validate", join(empty, "nope")]);
  assert.equal(missing.code, 64);
  assert.match(missing.stderr, /^tyhooks: Path ".*nope" does not exist\n/);
  const none = await cli(["plugins", "validate", empty]);
  assert.equal(none.code, 1);
  assert.equal(
    none.stdout,
    `${empty}:1:1: No plugin found in ${JSON.stringify(empty)}: no plugin.yaml in it or below it\n`,
  );
});

Deno.test("plugins validate also lints the legacy hooks dir: a near miss of an event, a hook that is not executable, one that cannot start", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": NOOP_SCRIPT,
  });
  const hooks = await makeTree({
    "task.done": "echo no exec bit\n",
    "task.doen": NOOP_SCRIPT,
    "task.failed": "#!/bin/sh\r\necho crlf\r\n",
  });
  const result = await validate(root, "--hooks-dir", hooks);
  assert.equal(result.code, 1);
  const failed = JSON.stringify(join(hooks, "task.failed"));
  assert.equal(
    result.stdout,
    `${join(hooks, "task.doen")}:1:1: Legacy hook "task.doen" is not a known event: ` +
      'did you mean "task.done"?\n' +
      `${join(hooks, "task.done")}:1:1: Legacy hook "task.done" is not executable: it will not ` +
      `run (hint: chmod +x ${JSON.stringify(join(hooks, "task.done"))})\n` +
      `${join(hooks, "task.failed")}:1:1: Legacy hook "task.failed" has a "#!" line ending in a ` +
      "carriage return (CRLF line ends), so it cannot be started (hint: dos2unix " +
      `${failed}, or sed -i 's/\\r$//' ${failed})\n`,
  );
});

Deno.test("plugins validate --plugins-dir naming a plugin itself fails, and a missing one is named as missing", async () => {
  const plugin = await makeTree({ "plugin.yaml": "name: myp\nhook:\n  task.done: nope.sh\n" });
  const self = await validate(plugin);
  assert.equal(self.code, 1, self.stdout);
  assert.match(
    self.stdout,
    /is itself a plugin, which is not loaded from there \(hint: tyhooks plugins validate /,
  );
  // A missing plugins dir holds no plugins (SPEC), and the ok line says it does not exist.
  const missing = await validate(join(plugin, "nope"));
  assert.equal(missing.code, 0, missing.stdout);
  assert.match(missing.stdout, /^ok: 0 plugins in ".*nope" \(it does not exist\)\n$/);
});

Deno.test("plugins validate exits 1 on a plugin that loads but whose hook script has no #! line, as ty loads it", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": "echo hi\n",
  });
  await Deno.chmod(join(root, "p/a.sh"), 0o755);
  assert.equal(await loadingSays(root), "", "it loads");
  const result = await validate(root);
  assert.equal(result.code, 1);
  assert.match(
    result.stdout,
    /^.*\/p\/plugin\.yaml:3:14: Hook "task\.done": script "a\.sh" does not start with a "#!" line/,
  );
});

Deno.test("plugins validate escapes control characters in a plugin's path: one line per problem, no escape sequence", async () => {
  const dir = "x\x1b[7m\u009b\ny";
  const root = await makeTree({
    [`${dir}/plugin.yaml`]: "name: ok\nhooks:\n  task.done: missing.sh\n",
  });
  const result = await validate(root);
  assert.equal(result.code, 1);
  // Two problems (the hook dropped, the plugin skipped), each on its own line.
  const lines = result.stdout.split("\n").filter((line) => line !== "");
  assert.equal(lines.length, 2, result.stdout);
  for (const line of lines) {
    assert.ok(line.startsWith(`${root}/x\\x1b[7m\\x9b\\x0ay/plugin.yaml:`), line);
  }
  assert.ok(!result.stdout.includes("\x1b") && !result.stdout.includes("\u009b"), result.stdout);
});

Deno.test("plugins validate PATH naming a FIFO plugin.yaml says so of its plugin; a device is not a plugin.yaml", async () => {
  const root = await makeTree({ "p/README.md": "a plugin whose manifest is a FIFO\n" });
  const fifo = join(root, "p", "plugin.yaml");
  assert.equal((await new Deno.Command("mkfifo", { args: [fifo] }).output()).code, 0);
  const named = await cli(["plugins", "validate", fifo]);
  assert.equal(named.code, 1, named.stderr);
  assert.match(named.stdout, /plugin\.yaml is not a regular file/);
  const device = await cli(["plugins", "validate", "/dev/zero"]);
  assert.equal(device.code, 64);
  assert.match(device.stderr, /^tyhooks: Path "\/dev\/zero" is not a plugin\.yaml\n/);
});
