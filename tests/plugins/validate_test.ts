import assert from "node:assert/strict";
import { join } from "node:path";
import { validatePlugins } from "../../lib/plugins/load.ts";
import { manifestJsonSchema } from "../../lib/plugins/manifest_schema.ts";
import { makeTree } from "../_cli.ts";

const SCRIPT = "#!/bin/sh\nexit 0\n";

/** Validates a tree and returns its problems as `relative-path:line:col: message`. */
async function lint(files: Record<string, string>): Promise<{ ok: boolean; lines: string[] }> {
  const root = await makeTree(files);
  const result = await validatePlugins(root);
  return {
    ok: result.ok,
    lines: result.problems.map((p) =>
      `${p.path.slice(root.length + 1)}:${p.line}:${p.column}: ${p.message}`
    ),
  };
}

Deno.test("validatePlugins() passes a clean plugin", async () => {
  const result = await lint({
    "p/plugin.yaml": "name: p\nversion: 0.1.0\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": SCRIPT,
  });
  assert.deepEqual(result, { ok: true, lines: [] });
});

Deno.test("validatePlugins() reports an unknown key such as hook: with a suggestion", async () => {
  const result = await lint({
    "p/plugin.yaml": [
      "name: p",
      "hook:",
      "  task.done: a.sh",
      "actions:",
      "  - id: x",
      "    comand: a.sh",
      "  - id: y",
      "    command: a.sh",
    ].join("\n") + "\n",
    "p/a.sh": SCRIPT,
  });
  assert.equal(result.ok, false);
  assert.deepEqual(result.lines, [
    'p/plugin.yaml:2:1: Unknown key "hook": did you mean "hooks"?',
    'p/plugin.yaml:5:5: Dropped action "x": "command" is missing',
    'p/plugin.yaml:6:5: Unknown key "comand" in "actions[0]": did you mean "command"?',
  ]);
});

Deno.test("validatePlugins() reports a type the loader tolerates, such as an unquoted version", async () => {
  const result = await lint({
    "p/plugin.yaml": "name: p\nversion: 1.10\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": SCRIPT,
  });
  assert.deepEqual(result.lines, ['p/plugin.yaml:2:10: "version" must be a string, not a number']);
});

Deno.test("validatePlugins() reports an event name that looks like a typo", async () => {
  const result = await lint({
    "p/plugin.yaml": "name: p\nhooks:\n  task.don: a.sh\n  my.custom.event: a.sh\n",
    "p/a.sh": SCRIPT,
  });
  assert.deepEqual(result.lines, [
    'p/plugin.yaml:3:3: Unknown event "task.don": did you mean "task.done"?',
  ]);
});

Deno.test("validatePlugins() lists every dropped entry of a skipped plugin, then why it is skipped", async () => {
  const result = await lint({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\n  task.failed: b.sh\n",
  });
  assert.deepEqual(result.lines, [
    'p/plugin.yaml:1:7: Skipped plugin "p" in "p": no usable hook, action, service, workflow or ' +
    'routine (dropped hook "task.done": script "a.sh" does not exist; hook "task.failed": ' +
    'script "b.sh" does not exist)',
    'p/plugin.yaml:3:14: Dropped hook "task.done": script "a.sh" does not exist',
    'p/plugin.yaml:4:16: Dropped hook "task.failed": script "b.sh" does not exist',
  ]);
});

Deno.test("validatePlugins() reports broken YAML at its line and column", async () => {
  const result = await lint({ "p/plugin.yaml": "name: p\nname: q\n" });
  assert.deepEqual(result.lines, [
    'p/plugin.yaml:2:1: Skipped plugin in "p": invalid YAML: Map keys must be unique',
  ]);
});

Deno.test("manifestJsonSchema() describes every manifest field and refuses unknown keys", async () => {
  const schema = await manifestJsonSchema() as {
    properties: Record<string, { items?: { properties: Record<string, unknown> } }>;
    required: string[];
    additionalProperties: boolean;
  };
  assert.deepEqual(Object.keys(schema.properties), [
    "name",
    "version",
    "description",
    "hooks",
    "actions",
    "services",
    "tyhooks",
  ]);
  assert.deepEqual(schema.required, ["name"]);
  assert.equal(schema.additionalProperties, false);
  assert.deepEqual(Object.keys(schema.properties.services.items!.properties), [
    "name",
    "command",
    "cwd",
    "env",
    "restart",
  ]);
});

Deno.test("validatePlugins() counts the plugins it checked", async () => {
  const root = await makeTree({ "p/plugin.yaml": "name: p\n", "p/workflows/w.yaml": "x: 1\n" });
  const result = await validatePlugins(join(root));
  assert.equal(result.checked, 1);
  assert.equal(result.ok, true);
});
