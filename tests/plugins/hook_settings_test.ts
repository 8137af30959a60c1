import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { validatePlugins } from "../../lib/plugins/validate.ts";
import { loadPluginsCached } from "../../lib/plugins/cache.ts";
import { hookSettings, toolMatches } from "../../lib/plugins/hook_settings.ts";
import type { PluginIndex } from "../../lib/plugins/types.ts";
import { NOOP_SCRIPT, tempDir, withTree } from "../_cli.ts";
import { loadTree, located, settled } from "../_index.ts";
import { RE2JS } from "npm:re2js@^2.10.0";

const GUARD = {
  "g/guard.sh": NOOP_SCRIPT,
  "g/place.sh": NOOP_SCRIPT,
  "g/route.sh": NOOP_SCRIPT,
};

// The files of plugin "g", with GUARD's scripts: its manifest maps `hooks` (a flow map) and has
// `settings` under `tyhooks:`, the first of them on line 4.
function pluginG(hooks: string, settings: string[]): Record<string, string> {
  const manifest = ["name: g", `hooks: ${hooks}`, "tyhooks:", ...settings, ""].join("\n");
  return { ...GUARD, "g/plugin.yaml": manifest };
}

// Loads plugin "g" (see pluginG).
async function loadG(
  hooks: string,
  settings: string[],
  fn: (index: PluginIndex, root: string) => void | Promise<void>,
): Promise<void> {
  await withTree(pluginG(hooks, settings), async (root) => {
    await fn(await loadPlugins(root), root);
  });
}

Deno.test("loadPlugins() reads each hook's tyhooks settings and keeps hooks as event -> script", async () => {
  await loadG("{pre_tool_call: guard.sh, task.placement: place.sh}", [
    '  pre_tool_call: {tools: "^(bash|write_file)$", persistent: true, max_procs: 3}',
    "  task.placement: {timeout: 2s, persistent: true}",
  ], async (index, root) => {
    assert.deepEqual(index.warnings, []);
    const [plugin] = index.plugins;
    assert.deepEqual(plugin.hooks, {
      pre_tool_call: join(root, "g", "guard.sh"),
      "task.placement": join(root, "g", "place.sh"),
    });
    assert.deepEqual(plugin.settings, {
      pre_tool_call: { tools: "^(bash|write_file)$", persistent: true, maxProcs: 3 },
      "task.placement": { timeoutMs: 2000, persistent: true },
    });
    assert.ok(await toolMatches(hookSettings(plugin, "pre_tool_call"), "bash"));
    assert.ok(!await toolMatches(hookSettings(plugin, "pre_tool_call"), "read_file"));
    assert.deepEqual(hookSettings(plugin, "task.done"), {});
  });
});

Deno.test("loadPlugins() reads timeouts written as 500ms, 2m and plain seconds", async () => {
  await loadG("{pre_tool_call: guard.sh, task.placement: place.sh, task.route: route.sh}", [
    "  pre_tool_call: {timeout: 500ms}",
    "  task.placement: {timeout: 1.5}",
    "  task.route: {timeout: 2m}",
  ], (index) => {
    assert.deepEqual(index.warnings, []);
    assert.deepEqual(index.plugins[0].settings, {
      pre_tool_call: { timeoutMs: 500 },
      "task.placement": { timeoutMs: 1500 },
      "task.route": { timeoutMs: 120_000 },
    });
  });
});

Deno.test("loadPlugins() warns about each bad setting by name and keeps the hook's defaults for it", async () => {
  await loadG("{pre_tool_call: guard.sh, task.placement: place.sh, task.route: route.sh}", [
    '  pre_tool_call: {tools: "(bash", toolz: x, timeout: soon, persistent: true}',
    "  task.placement: {tools: bash, max_procs: 0}",
    "  task.route: {persistent: true, max_procs: 2}",
    "  task.done: {timeout: 1s}",
  ], (index) => {
    const [plugin] = index.plugins;
    // Valid settings beside bad ones still apply; the bad ones keep their defaults.
    assert.deepEqual(plugin.settings, { pre_tool_call: { persistent: true } });
    assert.deepEqual(Object.keys(plugin.hooks).sort(), [
      "pre_tool_call",
      "task.placement",
      "task.route",
    ]);
    assert.deepEqual(located(index.warnings), [
      '4:26 Ignored setting "tools" of hook "pre_tool_call": "(bash" is not a valid ' +
      'regular expression: missing closing ): "(bash"',
      '4:35 Ignored setting "toolz" of hook "pre_tool_call": unknown setting, did you mean "tools"?',
      '4:54 Ignored setting "timeout" of hook "pre_tool_call": "soon" is not a duration ' +
      "(hint: 500ms, 15s, 2m or plain seconds, more than 0 and at most 24 days)",
      '5:20 Ignored setting "tools" of hook "task.placement": only tool hooks ' +
      "(pre_tool_call, post_tool_call) take it",
      '5:44 Ignored setting "max_procs" of hook "task.placement": must be a whole number of ' +
      "at least 1, not 0",
      '6:28 Ignored setting "persistent" of hook "task.route": only hooks that answer in JSON ' +
      "can be persistent",
      '6:34 Ignored setting "max_procs" of hook "task.route": only persistent hooks take it',
      '7:3 Ignored settings of hook "task.done": the plugin has no hook "task.done"',
    ]);
  });
});

// The tool names that `tools` reaches, each as a [name, asked] pair.
async function asked(tools: string, names: string[]): Promise<[string, boolean][]> {
  return await Promise.all(
    names.map(async (
      name,
    ): Promise<[string, boolean]> => [name, await toolMatches({ tools }, name)]),
  );
}

Deno.test("a tools expression is searched for anywhere in the tool name, as Claude Code's matchers", async () => {
  assert.deepEqual(
    await asked("bash|sh", ["bash", "run_bash", "run_shell_command", "ssh", "read_file", "BASH"]),
    [
      ["bash", true],
      ["run_bash", true],
      // "sh" is found in "run_shell_command": unanchored, as written.
      ["run_shell_command", true],
      ["ssh", true],
      ["read_file", false],
      ["BASH", false],
    ],
  );
  // Anchors are how a manifest asks for whole names.
  assert.deepEqual(await asked("^(bash|sh)$", ["bash", "run_bash", "sh", "ssh"]), [
    ["bash", true],
    ["run_bash", false],
    ["sh", true],
    ["ssh", false],
  ]);
});

Deno.test("a matcher of plain names answers as RE2 does, though it is run without it", async () => {
  const names = ["bash", "Bash", "run_bash", "bash_x", "sh", "x-y", "", "bash\n", "\nbash", "a|b"];
  for (
    const tools of [
      "bash",
      "bash|sh",
      "^bash$",
      "^(bash|Bash|sh)$",
      "(?:x-y|sh)$",
      "^a|b$",
      "(bash)",
    ]
  ) {
    const re2 = RE2JS.compile(tools);
    assert.deepEqual(
      await asked(tools, names),
      names.map((name) => [name, re2.test(name)]),
      tools,
    );
  }
});

Deno.test("a nested repeat such as ^(B+)+$ answers at once, whatever the tool name", async () => {
  const started = performance.now();
  assert.deepEqual(await asked("^(B+)+$", ["B".repeat(39) + "x", "B".repeat(40), "xB"]), [
    ["B".repeat(39) + "x", false],
    ["B".repeat(40), true],
    ["xB", false],
  ]);
  // A backtracking engine takes hours here; this bound only catches that.
  assert.ok(performance.now() - started < 10_000);
});

Deno.test("loadPlugins() keeps a tools expression beyond the common subset, and RE2 runs it", async () => {
  const lines = ["  pre_tool_call: {tools: '(?i)^bash$|\\bsh\\b'}"];
  await loadG("{pre_tool_call: guard.sh}", lines, async (index) => {
    assert.deepEqual(index.warnings, []);
    const settings = hookSettings(index.plugins[0], "pre_tool_call");
    assert.deepEqual(settings, { tools: "(?i)^bash$|\\bsh\\b" });
    const names = ["BASH", "Bash", "run_bash", "sh", "run sh", "ssh"];
    assert.deepEqual(
      await Promise.all(names.map((name) => toolMatches(settings, name))),
      [true, true, false, true, true, false],
    );
  });
});

Deno.test("loadPlugins() warns about a tools expression RE2 does not take, and the hook is asked about every tool", async () => {
  await loadG("{pre_tool_call: guard.sh, post_tool_call: guard.sh}", [
    '  pre_tool_call: {tools: "^(?!read_)", timeout: 2s}',
    "  post_tool_call: {tools: '(b)\\1'}",
  ], async (index) => {
    const [plugin] = index.plugins;
    const hint = "(hint: tools are RE2 expressions: no lookaround, backreferences or possessive " +
      "repeats)";
    assert.deepEqual(located(index.warnings), [
      '4:26 Ignored setting "tools" of hook "pre_tool_call": "^(?!read_)" is not a valid ' +
      `regular expression: invalid or unsupported Perl syntax: "(?!" ${hint}`,
      '5:27 Ignored setting "tools" of hook "post_tool_call": "(b)\\\\1" is not a valid ' +
      `regular expression: invalid escape sequence: "\\\\1" ${hint}`,
    ]);
    assert.deepEqual(plugin.settings, { pre_tool_call: { timeoutMs: 2000 } });
    assert.ok(await toolMatches(hookSettings(plugin, "pre_tool_call"), "read_file"));
    assert.ok(await toolMatches(hookSettings(plugin, "post_tool_call"), "write_file"));
  });
});

Deno.test("loadPlugins() ignores a tyhooks key that is not a map, with one warning", async () => {
  const { index } = await loadTree({
    ...GUARD,
    "g/plugin.yaml": "name: g\nhooks: {pre_tool_call: guard.sh}\ntyhooks: [1]\n",
  });
  assert.deepEqual(index.plugins[0].settings, {});
  assert.deepEqual(index.warnings.map((w) => w.message), [
    'Ignored "tyhooks": must be a map of event to settings, not a list',
  ]);
});

Deno.test("plugins validate accepts tyhooks settings and reports a bad one once", async () => {
  await withTree({
    ...pluginG("{pre_tool_call: guard.sh}", [
      "  pre_tool_call: {tools: ^bash$, timeout: 2s, persistent: true, max_procs: 2}",
    ]),
    "h/guard.sh": NOOP_SCRIPT,
    "h/plugin.yaml":
      "name: h\nhooks: {pre_tool_call: guard.sh}\ntyhooks:\n  pre_tool_call: {tool: x}\n",
  }, async (root) => {
    const result = await validatePlugins(root);
    assert.deepEqual(result.problems.map((p) => `${p.plugin} ${p.line}:${p.column} ${p.message}`), [
      'h 4:19 Ignored setting "tool" of hook "pre_tool_call": unknown setting, did you mean "tools"?',
    ]);
  });
});

Deno.test("loadPluginsCached() keeps the settings in the cached index", async () => {
  const files = pluginG("{pre_tool_call: guard.sh}", ["  pre_tool_call: {tools: ^bash$}"]);
  await withTree(files, async (root) => {
    const cacheDir = await tempDir();
    await settled();
    try {
      assert.equal((await loadPluginsCached(root, { cacheDir })).hit, false);
      const warm = await loadPluginsCached(root, { cacheDir });
      assert.equal(warm.hit, true);
      assert.deepEqual(warm.index.plugins[0].settings, { pre_tool_call: { tools: "^bash$" } });
    } finally {
      await Deno.remove(cacheDir, { recursive: true });
    }
  });
});
