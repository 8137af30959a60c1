import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { makeTree, NOOP_SCRIPT } from "../_cli.ts";
import { loadTree, located } from "../_index.ts";

Deno.test("loadPlugins() skips a manifest without a name with exactly one warning", async () => {
  const { index } = await loadTree({
    "nameless/plugin.yaml": "version: 1.0.0\nhooks:\n  task.done: on-done.sh\n",
    "nameless/on-done.sh": NOOP_SCRIPT,
    "empty-name/plugin.yaml": 'name: ""\nhooks:\n  task.done: on-done.sh\n',
    "empty-name/on-done.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.plugins, []);
  assert.deepEqual(index.warnings.map((w) => [w.plugin, w.message]), [
    [null, 'Skipped plugin in "empty-name": "name" is missing or empty'],
    [null, 'Skipped plugin in "nameless": "name" is missing or empty'],
  ]);
});

Deno.test("loadPlugins() skips a plugin whose only scripts are missing with exactly one warning", async () => {
  const { index } = await loadTree({
    "ghost/plugin.yaml": "name: ghost\nhooks:\n  task.done: gone.sh\n  task.failed: also-gone.sh\n",
  });
  assert.deepEqual(index.plugins, []);
  assert.equal(index.warnings.length, 1);
  assert.equal(
    index.warnings[0].message,
    'Skipped plugin "ghost" in "ghost": no usable hook, action, service, workflow or routine ' +
      '(dropped hook "task.done": script "gone.sh" does not exist; ' +
      'hook "task.failed": script "also-gone.sh" does not exist)',
  );
  assert.equal(index.warnings[0].plugin, "ghost");
});

Deno.test("loadPlugins() drops a hook whose script is missing and keeps the rest of the plugin", async () => {
  const { root, index } = await loadTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: on-done.sh\n  task.route: route.sh\n",
    "p/on-done.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.plugins[0].hooks, { "task.done": join(root, "p", "on-done.sh") });
  assert.deepEqual(index.warnings, [{
    plugin: "p",
    path: join(root, "p", "plugin.yaml"),
    line: 4,
    column: 15,
    message: 'Dropped hook "task.route": script "route.sh" does not exist',
  }]);
});

Deno.test("loadPlugins() loads a plugin that only has a service", async () => {
  const { root, index } = await loadTree({
    "svc/plugin.yaml": [
      "name: svc",
      "services:",
      "  - name: index",
      "    command: ./search-server --port 7000",
      "    cwd: data",
      '    env: ["FOO=bar", "EMPTY="]',
      "    restart: always",
      "  - name: plain",
      "    command: sleep 1",
    ].join("\n") + "\n",
    "svc/data/.keep": "",
  });
  assert.deepEqual(index.warnings, []);
  assert.deepEqual(index.plugins[0].services, [
    {
      name: "index",
      command: "./search-server --port 7000",
      cwd: join(root, "svc", "data"),
      env: ["FOO=bar", "EMPTY="],
      restart: "always",
    },
    { name: "plain", command: "sleep 1", cwd: join(root, "svc"), env: [], restart: "on-failure" },
  ]);
});

Deno.test("loadPlugins() drops each malformed service with a warning and keeps the good one", async () => {
  const { index } = await loadTree({
    "svc/plugin.yaml": [
      "name: svc",
      "services:",
      "  - name: good",
      "    command: sleep 1",
      "  - command: no-name",
      "  - name: no-command",
      "  - name: escapes",
      "    command: sleep 1",
      "    cwd: ../..",
      "  - name: bad-env",
      "    command: sleep 1",
      '    env: ["1X=y", "OK=a\\0b"]',
      "  - name: bad-restart",
      "    command: sleep 1",
      "    restart: sometimes",
    ].join("\n") + "\n",
  });
  // A cwd outside the plugin dir loads, as in ty (plugins validate reports it).
  // So does a service with an env entry that is not KEY=VALUE: ty keeps it (SPEC, item 4).
  assert.deepEqual(index.plugins[0].services.map((s) => s.name), ["good", "escapes", "bad-env"]);
  assert.deepEqual(index.plugins[0].services[2].env, []);
  assert.deepEqual(located(index.warnings), [
    '5:5 Dropped service #2: "name" is missing',
    '6:5 Dropped service "no-command": "command" is missing',
    '12:11 Skipped env entry "1X=y" of service "bad-env": it is not KEY=VALUE (KEY: letters, ' +
    "digits and _, not starting with a digit)",
    '12:19 Skipped env entry "OK=a\\u0000b" of service "bad-env": its value holds a NUL byte, ' +
    "which no environment can",
    '15:14 Dropped service "bad-restart": "restart" must be one of "always", "on-failure", ' +
    '"never", not "sometimes"',
  ]);
});

Deno.test("loadPlugins() drops an action without id or command and defaults the label to the id", async () => {
  const { root, index } = await loadTree({
    "a/plugin.yaml": [
      "name: a",
      "actions:",
      "  - id: sync",
      "    command: sync.sh",
      "  - id: labelled",
      "    label: Sync to tracker",
      "    command: sync.sh",
      "  - label: no id",
      "    command: sync.sh",
      "  - id: no-command",
    ].join("\n") + "\n",
    "a/sync.sh": NOOP_SCRIPT,
  });
  const script = join(root, "a", "sync.sh");
  assert.deepEqual(index.plugins[0].actions, [
    { id: "sync", label: "sync", command: script },
    { id: "labelled", label: "Sync to tracker", command: script },
  ]);
  assert.deepEqual(index.warnings.map((w) => w.message), [
    'Dropped action #3: "id" is missing',
    'Dropped action "no-command": "command" is missing',
  ]);
});

Deno.test("loadPlugins() discovers workflows and routines by convention, sorted", async () => {
  const { index } = await loadTree({
    "w/plugin.yaml": "name: w\n",
    "w/workflows/release.yml": "steps: []\n",
    "w/workflows/bugfix.yaml": "steps: []\n",
    "w/workflows/notes.txt": "not a workflow\n",
    "w/routines/triage/prompt.md": "Triage the inbox\n",
    "w/routines/digest/prompt.md": "Write a digest\n",
    "w/routines/empty/readme.md": "no prompt here\n",
  });
  assert.deepEqual(index.warnings, []);
  assert.deepEqual(index.plugins[0].workflows, ["bugfix", "release"]);
  assert.deepEqual(index.plugins[0].routines, ["digest", "triage"]);
});

Deno.test("loadPlugins() reads scalars as written, as ty does (version 1.10 stays 1.10)", async () => {
  const { index } = await loadTree({
    "v/plugin.yaml": "name: 2048\nversion: 1.10\ndescription:\nhooks:\n  task.done: on-done.sh\n",
    "v/on-done.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.warnings, []);
  assert.equal(index.plugins[0].name, "2048");
  assert.equal(index.plugins[0].version, "1.10");
  assert.equal(index.plugins[0].description, "");
});

Deno.test("loadPlugins() leaves unknown keys out of the plugin without a warning", async () => {
  const { index } = await loadTree({
    "k/plugin.yaml": "name: k\nhook:\n  task.done: on-done.sh\nhooks:\n  task.done: on-done.sh\n",
    "k/on-done.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.warnings, []);
  assert.deepEqual(Object.keys(index.plugins[0]).sort(), [
    "actions",
    "description",
    "dir",
    "hooks",
    "name",
    "routines",
    "services",
    "settings",
    "version",
    "workflows",
  ]);
});

Deno.test("loadPlugins() warns about an event written beside hooks: rather than under it, and keeps the rest of the plugin", async () => {
  const { root, index } = await loadTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\npre_tool_call: a.sh\nhomepage: x\n",
    "p/a.sh": NOOP_SCRIPT,
    "q/plugin.yaml": "name: q\nhooks:\ntask.done: a.sh\n",
    "q/a.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.plugins.map((p) => [p.name, Object.keys(p.hooks)]), [["p", [
    "task.done",
  ]]]);
  assert.deepEqual(index.warnings, [{
    plugin: "p",
    path: join(root, "p", "plugin.yaml"),
    line: 4,
    column: 1,
    message:
      'Dropped hook "pre_tool_call": it is outside "hooks:" (hint: indent it under "hooks:")',
  }, {
    plugin: "q",
    path: join(root, "q", "plugin.yaml"),
    line: 1,
    column: 7,
    message: 'Skipped plugin "q" in "q": no usable hook, action, service, workflow or routine ' +
      '(dropped hook "task.done": it is outside "hooks:")',
  }]);
});

Deno.test("loadPlugins() skips a plugin with invalid YAML with the line and column of the error", async () => {
  const { index } = await loadTree({
    "bad/plugin.yaml": "name: bad\nhooks:\n  task.done: a.sh\n task.route: b.sh\n",
    "good/plugin.yaml": "name: good\nhooks:\n  task.done: a.sh\n",
    "good/a.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.plugins.map((p) => p.name), ["good"]);
  assert.equal(index.warnings.length, 1);
  const [warning] = index.warnings;
  assert.equal(warning.plugin, null);
  assert.deepEqual([warning.line, warning.column], [4, 1]);
  assert.match(warning.message, /^Skipped plugin in "bad": invalid YAML: /);
});

Deno.test("loadPlugins() keeps two actions with the same id, as ty does, and drops a second service of one name", async () => {
  const { root, index } = await loadTree({
    "d/plugin.yaml": [
      "name: d",
      "actions:",
      "  - id: sync",
      "    command: a.sh",
      "  - id: sync",
      "    label: Sync again",
      "    command: b.sh",
      "services:",
      "  - name: web",
      "    command: sleep 1",
      "  - name: web",
      "    command: sleep 2",
    ].join("\n") + "\n",
    "d/a.sh": NOOP_SCRIPT,
    "d/b.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.plugins[0].actions, [
    { id: "sync", label: "sync", command: join(root, "d", "a.sh") },
    { id: "sync", label: "Sync again", command: join(root, "d", "b.sh") },
  ]);
  assert.deepEqual(index.plugins[0].services.map((s) => s.command), ["sleep 1"]);
  assert.deepEqual(located(index.warnings), [
    '11:5 Dropped service "web": the name is already used by an earlier service',
  ]);
});

function plugin(name: string): Record<string, string> {
  return {
    "plugin.yaml": `name: ${name}\nhooks:\n  task.done: on-done.sh\n`,
    "on-done.sh": NOOP_SCRIPT,
  };
}

function under(dir: string, files: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(files).map(([path, text]) => [`${dir}/${path}`, text]));
}

Deno.test("loadPlugins() sorts plugins by name, not by folder", async () => {
  const { index } = await loadTree({
    ...under("a-folder", plugin("zulu")),
    ...under("b-folder", plugin("alpha")),
    ...under("c-folder", plugin("mike")),
  });
  assert.deepEqual(index.plugins.map((p) => p.name), ["alpha", "mike", "zulu"]);
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() finds no plugins and no warnings in a missing dir", async () => {
  const root = await makeTree({});
  const index = await loadPlugins(join(root, "does-not-exist"));
  assert.deepEqual(index.plugins, []);
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() silently ignores a folder without a manifest", async () => {
  const { index } = await loadTree({ ...under("x", plugin("x")), "notes/readme.md": "hello\n" });
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() finds plugins in nested collections down to depth 5 as ty does, not deeper", async () => {
  const { root, index } = await loadTree({
    ...under("one", plugin("depth-1")),
    ...under("c1/two", plugin("depth-2")),
    ...under("c1/c2/c3/four", plugin("depth-4")),
    ...under("c1/c2/c3/c4/five", plugin("depth-5")),
    ...under("c1/c2/c3/c4/c5/six", plugin("depth-6")),
  });
  assert.deepEqual(index.plugins.map((p) => p.name), ["depth-1", "depth-2", "depth-4", "depth-5"]);
  assert.deepEqual(index.plugins[3].dir, join(root, "c1/c2/c3/c4/five"));
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() does not descend into a plugin", async () => {
  const { index } = await loadTree({
    ...under("outer", plugin("outer")),
    ...under("outer/inner", plugin("inner")),
  });
  assert.deepEqual(index.plugins.map((p) => p.name), ["outer"]);
});

Deno.test("loadPlugins() skips .git folders, and only those, as ty's collections need", async () => {
  const { index } = await loadTree({
    ...under(".hidden", plugin("hidden")),
    ...under(".git/p", plugin("in-git")),
    ...under("team/.git", plugin("git-itself")),
    ...under("seen", plugin("seen")),
  });
  assert.deepEqual(index.plugins.map((p) => p.name), ["hidden", "seen"]);
});

Deno.test("loadPlugins() loads both of two plugins with the same name, as ty does, in path order", async () => {
  const { root, index } = await loadTree({
    ...under("b/twin", plugin("twin")),
    ...under("a", plugin("twin")),
    ...under("c", plugin("alpha")),
  });
  assert.deepEqual(index.plugins.map((p) => [p.name, p.dir]), [
    ["alpha", join(root, "c")],
    ["twin", join(root, "a")],
    ["twin", join(root, "b/twin")],
  ]);
  assert.deepEqual(index.warnings, []);
});

Deno.test("loadPlugins() skips, as ty's yaml.v3 does, a manifest escaping a UTF-16 surrogate in a double-quoted string, at the escape", async () => {
  const { index } = await loadTree({
    // Plain YAML but for the escape, and a manifest only the yaml package reads (a flow map).
    "plain/plugin.yaml":
      'name: plain\ndescription: "smile \\ud83d\\ude00"\nhooks:\n  task.done: a.sh\n',
    "plain/a.sh": NOOP_SCRIPT,
    "flow/plugin.yaml": 'name: flow\nhooks: {task.done: a.sh}\nx: ["ok \\\\ud83d", "\\uDC00"]\n',
    "flow/a.sh": NOOP_SCRIPT,
    "fine/plugin.yaml": 'name: fine\ndescription: "smile \\U0001F600"\nhooks:\n  task.done: a.sh\n',
    "fine/a.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(index.plugins.map((p) => [p.name, p.description]), [["fine", "smile 😀"]]);
  assert.deepEqual(located(index.warnings), [
    '3:20 Skipped plugin in "flow": invalid YAML: "\\uDC00" escapes half of a UTF-16 surrogate ' +
    "pair, which ty's YAML reader (yaml.v3) refuses (hint: a lone surrogate is not a character: " +
    "remove it)",
    '2:21 Skipped plugin in "plain": invalid YAML: "\\ud83d" escapes half of a UTF-16 surrogate ' +
    "pair, which ty's YAML reader (yaml.v3) refuses (hint: write the character itself, or " +
    '"\\U0001F600")',
  ]);
});

Deno.test("loadPlugins() follows a symlink to a plugin folder", async () => {
  const source = await makeTree(plugin("linked"));
  const root = await makeTree({});
  await Deno.symlink(source, join(root, "linked"));
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins.map((p) => p.name), ["linked"]);
  assert.deepEqual(index.plugins[0].hooks["task.done"], join(root, "linked", "on-done.sh"));
});

Deno.test("loadPlugins() orders plugins by name as Go compares strings: by UTF-8 bytes", async () => {
  // "ａ" (U+FF41) is EF BD 81 in UTF-8 and "😀" (U+1F600) F0 9F 98 80: ty asks "ａ" first. By
  // UTF-16 code units (JS's <) "😀" (D83D DE00) would come first.
  const names = ["😀", "ａ", "z", "A"];
  const files: Record<string, string> = {};
  names.forEach((name, i) => {
    files[`p${i}/plugin.yaml`] = `name: "${name}"\nhooks:\n  task.done: h.sh\n`;
    files[`p${i}/h.sh`] = "#!/bin/sh\n";
  });
  const dir = await makeTree(files);
  for (let i = 0; i < names.length; i++) await Deno.chmod(join(dir, `p${i}`, "h.sh"), 0o755);
  const index = await loadPlugins(dir);
  assert.deepEqual(index.plugins.map((p) => p.name), ["A", "z", "ａ", "😀"]);
});
