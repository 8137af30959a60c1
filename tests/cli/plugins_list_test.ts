import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, NOOP_SCRIPT, tempDir } from "../_cli.ts";
import { TWINS } from "./_trees.ts";
import { settled } from "../_index.ts";

const TREE = {
  "tracker/plugin.yaml": [
    "name: tracker",
    "version: 0.2.0",
    "description: Sync tasks to the tracker",
    "hooks:",
    "  task.done: on-done.sh",
    "  task.route: route.sh",
    "actions:",
    "  - id: sync",
    "    label: Sync now",
    "    command: on-done.sh",
    "services:",
    "  - name: index",
    "    command: sleep 1000",
  ].join("\n") + "\n",
  "tracker/on-done.sh": NOOP_SCRIPT,
  "tracker/workflows/release.yaml": "steps: []\n",
  "tracker/routines/triage/prompt.md": "Triage\n",
  "team/guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
  "team/guard/guard.sh": NOOP_SCRIPT,
};

Deno.test("plugins list shows, as ty does, each plugin's parts and how to use them; warnings on stderr", async () => {
  const root = await makeTree(TREE);
  const result = await listPlugins(root);
  assert.equal(result.code, 0);
  assert.equal(
    result.stdout,
    [
      `Plugins in ${JSON.stringify(root)}:`,
      "",
      "  guard (-)",
      "    hook  pre_tool_call  -> guard.sh",
      "",
      "  tracker (0.2.0)",
      "    Sync tasks to the tracker",
      "    hook      task.done        -> on-done.sh",
      '    action    sync "Sync now"  -> on-done.sh  run: tyhooks plugins run tracker sync',
      "    service   index            -> sleep 1000  run: tyhooks services run",
      "    workflow  release",
      "    routine   triage",
      "",
    ].join("\n"),
  );
  assert.equal(
    result.stderr,
    'tyhooks: warn: Dropped hook "task.route": script "route.sh" does not exist ' +
      `(plugin=tracker path=${join(root, "tracker/plugin.yaml")} line=6 column=15)\n`,
  );
});

Deno.test("tyhooks plugins (alone) lists too, and shows the legacy hooks and their problems", async () => {
  const root = await makeTree(TREE);
  const hooks = await makeTree({ "task.done": "#!/bin/sh\n", "task.failed": "echo no exec bit\n" });
  const result = await cli(["plugins", "--plugins-dir", root, "--hooks-dir", hooks]);
  assert.equal(result.code, 0, result.stderr);
  assert.ok(
    result.stdout.endsWith(
      `Legacy hooks in ${JSON.stringify(hooks)}:\n\n` +
        `  task.done    -> ${join(hooks, "task.done")}\n` +
        `  task.failed  (not runnable) -> ${join(hooks, "task.failed")}\n`,
    ),
    result.stdout,
  );
  assert.match(
    result.stderr,
    /Legacy hook "task.failed" is not executable: it will not run \(hint: chmod \+x "/,
  );
  const json = await cli([
    "plugins",
    "list",
    "--json",
    "--plugins-dir",
    root,
    "--hooks-dir",
    hooks,
  ]);
  const warning = JSON.parse(json.stdout).warnings.at(-1);
  assert.deepEqual([warning.plugin, warning.path], [null, join(hooks, "task.failed")]);
});

Deno.test("plugins list --json prints SPEC's document with every field present", async () => {
  const root = await makeTree(TREE);
  const result = await cli(["plugins", "list", "--json", "--plugins-dir", root]);
  assert.equal(result.code, 0);
  assert.equal(result.stderr, "");
  const dir = join(root, "tracker");
  assert.deepEqual(JSON.parse(result.stdout), {
    plugins: [
      {
        name: "guard",
        version: "",
        description: "",
        dir: join(root, "team/guard"),
        hooks: { pre_tool_call: join(root, "team/guard/guard.sh") },
        actions: [],
        services: [],
        workflows: [],
        routines: [],
      },
      {
        name: "tracker",
        version: "0.2.0",
        description: "Sync tasks to the tracker",
        dir,
        hooks: { "task.done": join(dir, "on-done.sh") },
        actions: [{ id: "sync", label: "Sync now", command: join(dir, "on-done.sh") }],
        services: [{
          name: "index",
          command: "sleep 1000",
          cwd: dir,
          env: [],
          restart: "on-failure",
        }],
        workflows: ["release"],
        routines: ["triage"],
      },
    ],
    warnings: [{
      plugin: "tracker",
      path: join(dir, "plugin.yaml"),
      line: 6,
      column: 15,
      message: 'Dropped hook "task.route": script "route.sh" does not exist',
    }],
  });
});

Deno.test("plugins list --json lists both plugins that share a name and both actions that share an id, as ty does", async () => {
  const root = await makeTree(TWINS);
  const result = await cli(["plugins", "list", "--json", "--plugins-dir", root]);
  assert.deepEqual([result.code, result.stderr], [0, ""]);
  const listed = JSON.parse(result.stdout);
  assert.deepEqual(
    listed.plugins.map((p: { name: string; dir: string; actions: { label: string }[] }) => [
      p.name,
      p.dir,
      p.actions.map((a) => a.label),
    ]),
    [["twin", join(root, "a"), ["go", "Go again"]], ["twin", join(root, "b/twin"), ["go"]]],
  );
  assert.deepEqual(listed.warnings, []);
});

Deno.test("plugins list --json gives null plugin, line and column when they are unknown", async () => {
  const root = await makeTree({ "x/plugin.yaml": "version: 1\n" });
  const result = await cli(["plugins", "list", "--json", "--plugins-dir", root]);
  const doc = JSON.parse(result.stdout);
  assert.deepEqual(doc.plugins, []);
  assert.equal(doc.warnings[0].plugin, null);
  const unreadable = await cli([
    "plugins",
    "list",
    "--json",
    "--plugins-dir",
    join(root, "x/plugin.yaml"),
  ]);
  const warning = JSON.parse(unreadable.stdout).warnings[0];
  assert.deepEqual([warning.plugin, warning.line, warning.column], [null, null, null]);
  assert.match(warning.message, /^Cannot read the plugins dir: /);
});

Deno.test("plugins list reads the plugins dir from $TY_PLUGINS_DIR", async () => {
  const root = await makeTree(TREE);
  const result = await cli(["plugins", "list", "--json"], { env: { TY_PLUGINS_DIR: root } });
  assert.deepEqual(JSON.parse(result.stdout).plugins.map((p: { name: string }) => p.name), [
    "guard",
    "tracker",
  ]);
});

Deno.test("plugins list, services list and spool list say there is nothing in one form: an info line on stderr, stdout empty", async () => {
  const root = await makeTree({});
  const missing = join(root, "nothing-here");
  const state = join(root, "state");
  const env = { env: { XDG_STATE_HOME: state } };
  const dirs = ["--plugins-dir", missing, "--hooks-dir", missing];
  const spool = join(state, "tyhooks", "spool");
  for (
    const [words, line] of [
      [
        ["plugins", "list"],
        `No plugins in ${JSON.stringify(missing)} (hint: add one with "tyhooks plugins add ` +
        'SOURCE" or "tyhooks plugins new NAME")',
      ],
      [["services", "list"], `No services in ${JSON.stringify(missing)}`],
      [["spool", "list"], `No spooled events in ${JSON.stringify(spool)}`],
    ] as const
  ) {
    const result = await cli([...words, ...dirs], env);
    assert.deepEqual(result, { code: 0, stdout: "", stderr: `tyhooks: info: ${line}\n` });
  }
  const json = await Promise.all(
    [["plugins", "list"], ["services", "list"], ["spool", "list"]].map((words) =>
      cli([...words, "--json", ...dirs], env)
    ),
  );
  assert.deepEqual(json.map((r) => [r.code, JSON.parse(r.stdout), r.stderr]), [
    [0, { plugins: [], warnings: [] }, ""],
    [0, { services: [] }, ""],
    [0, { entries: [], set_aside: [] }, ""],
  ]);
});

Deno.test("plugins list reads a warm index cache, and prints the same document and warnings as from disk", async () => {
  const dir = await makeTree({ ...TREE, "broken/plugin.yaml": "name: [\n" });
  const home = await tempDir();
  await settled();
  const env = { XDG_CACHE_HOME: join(home, "cache") };
  const args = ["plugins", "list", "--json", "--plugins-dir", dir, "--log-level", "debug"];
  const cold = await cli(args, { env });
  const warm = await cli(args, { env });
  assert.equal(cold.code, 0, cold.stderr);
  assert.match(cold.stderr, /Plugin index loaded/);
  assert.match(warm.stderr, /Plugin index from cache/);
  assert.equal(warm.stdout, cold.stdout);
  assert.ok(JSON.parse(warm.stdout).warnings.length > 0, warm.stdout);
  const text = ["plugins", "list", "--plugins-dir", dir];
  assert.deepEqual(await cli(text, { env }), await cli(text, { env: { TYHOOKS_NO_CACHE: "1" } }));
});

Deno.test("plugins list shows control characters (C0, DEL, C1) escaped as its log does, \\x1b and \\x9b, never raw", async () => {
  // YAML escapes: a raw control character makes the manifest unreadable, an escaped one does not.
  const root = await makeTree({
    "svc/plugin.yaml": [
      "name: svc",
      'description: "calm\\e[31m\\x7f\\x9b2Jred"',
      "services:",
      "  - name: paint",
      "    command: \"printf '\\e[31mred\\x9b2J\\x7f'\"",
    ].join("\n") + "\n",
    "esc/plugin.yaml": 'name: "evil\\e[31mred"\nservices:\n  - {name: idle, command: sleep 9}\n',
    "csi/plugin.yaml": 'name: "evil\\x9b2Jred"\nservices:\n  - {name: idle, command: sleep 9}\n',
  });
  const result = await listPlugins(root);
  assert.equal(result.code, 0);
  // deno-lint-ignore no-control-regex -- finding raw control characters is the point
  const raw = /[\x00-\x09\x0b-\x1f\x7f-\x9f]/;
  assert.doesNotMatch(result.stdout, raw, JSON.stringify(result.stdout));
  assert.doesNotMatch(result.stderr, raw, JSON.stringify(result.stderr));
  // A service command is the user's own words: shown, escaped.
  assert.match(result.stdout, /-> printf '\\x1b\[31mred\\x9b2J\\x7f'/);
  // A description is shown without them.
  assert.match(result.stdout, /\n {4}calm\[31m2Jred\n/);
  // A name holding one, C0 or C1, is refused, and the log says so.
  assert.doesNotMatch(result.stdout, /evil/);
  for (const dir of ["esc", "csi"]) {
    assert.match(result.stderr, new RegExp(`Skipped plugin in "${dir}": "name" contains control`));
  }
});

// `plugins list` of the plugins in `root`, with a hooks dir that does not exist.
function listPlugins(root: string): ReturnType<typeof cli> {
  return cli(["plugins", "list", "--plugins-dir", root, "--hooks-dir", join(root, "no-hooks")]);
}
