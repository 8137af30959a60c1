import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";

const SCRIPT = "#!/bin/sh\nexit 0\n";

Deno.test("plugins validate exits 1 and prints path:line:col for broken YAML", async () => {
  const root = await makeTree({
    "good/plugin.yaml": "name: good\nhooks:\n  task.done: a.sh\n",
    "good/a.sh": SCRIPT,
    "broken/plugin.yaml": "name: broken\nhooks: [a.sh\n",
  });
  const result = await cli(["plugins", "validate", "--plugins-dir", root]);
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
    "p/a.sh": SCRIPT,
  });
  const list = await cli(["plugins", "list", "--plugins-dir", root]);
  assert.equal(list.stderr, "", "loading ignores unknown keys silently");
  const result = await cli(["plugins", "validate", "--plugins-dir", root]);
  assert.equal(result.code, 1);
  assert.equal(
    result.stdout,
    `${join(root, "p/plugin.yaml")}:2:1: Unknown key "hook": did you mean "hooks"?\n`,
  );
});

Deno.test("plugins validate exits 0 with an ok line on a clean dir", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nversion: 0.1.0\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": SCRIPT,
  });
  const result = await cli(["plugins", "validate", "--plugins-dir", root]);
  assert.deepEqual(result, {
    code: 0,
    stdout: `ok: 1 plugin in ${JSON.stringify(root)}\n`,
    stderr: "",
  });
});

Deno.test("plugins validate --json prints ok and the problems", async () => {
  const root = await makeTree({
    "p/plugin.yaml": "name: p\nversion: 1.10\nhooks:\n  task.done: a.sh\n",
    "p/a.sh": SCRIPT,
  });
  const result = await cli(["plugins", "validate", "--json", "--plugins-dir", root]);
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
  const clean = await cli(["plugins", "validate", "--json", "--plugins-dir", join(root, "none")]);
  assert.equal(clean.code, 0);
  assert.deepEqual(JSON.parse(clean.stdout), { ok: true, problems: [] });
});
