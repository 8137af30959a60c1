import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { makeTree, NOOP_SCRIPT } from "../_cli.ts";

/** Loads one plugin with a good hook plus `hooks`, and returns its hooks and warning texts. */
async function loadWithHooks(
  hooks: Record<string, string>,
  files: Record<string, string> = {},
  setup: (dir: string) => Promise<void> = async () => {},
): Promise<{ hooks: Record<string, string>; messages: string[]; dir: string }> {
  const lines = Object.entries({ "task.done": "ok.sh", ...hooks }).map(([e, s]) => `  ${e}: ${s}`);
  const root = await makeTree({
    "p/plugin.yaml": `name: p\nhooks:\n${lines.join("\n")}\n`,
    "p/ok.sh": NOOP_SCRIPT,
    ...Object.fromEntries(Object.entries(files).map(([k, v]) => [`p/${k}`, v])),
  });
  const dir = join(root, "p");
  await setup(dir);
  const index = await loadPlugins(root);
  return { hooks: index.plugins[0].hooks, messages: index.warnings.map((w) => w.message), dir };
}

Deno.test("loadPlugins() drops a hook whose script is not executable, with a chmod hint", async () => {
  const { hooks, messages, dir } = await loadWithHooks({ "task.failed": "plain.sh" }, {
    "plain.sh": "echo no shebang, no exec bit\n",
  });
  assert.deepEqual(Object.keys(hooks), ["task.done"]);
  assert.deepEqual(messages, [
    `Dropped hook "task.failed": script "plain.sh" is not executable ` +
    `(hint: chmod +x "${join(dir, "plain.sh")}")`,
  ]);
});

Deno.test("loadPlugins() drops a hook whose script is a folder", async () => {
  const { messages } = await loadWithHooks({ "task.failed": "scripts" }, {
    "scripts/a.sh": NOOP_SCRIPT,
  });
  assert.deepEqual(messages, [
    `Dropped hook "task.failed": script "scripts" is not a regular file`,
  ]);
});

Deno.test("loadPlugins() keeps a hook whose script is reached with ../, as ty does", async () => {
  const { hooks, messages, dir } = await loadWithHooks({ "task.failed": "../shared.sh" });
  await Deno.writeTextFile(join(dir, "..", "shared.sh"), NOOP_SCRIPT);
  await Deno.chmod(join(dir, "..", "shared.sh"), 0o755);
  const index = await loadPlugins(join(dir, ".."));
  assert.deepEqual(messages, ['Dropped hook "task.failed": script "../shared.sh" does not exist']);
  assert.equal(hooks["task.failed"], undefined);
  assert.deepEqual(index.warnings, []);
  assert.equal(index.plugins[0].hooks["task.failed"], join(dir, "..", "shared.sh"));
});

Deno.test("loadPlugins() reads an absolute script path inside the plugin dir, as Go's filepath.Join does", async () => {
  const { messages, dir } = await loadWithHooks({ "task.failed": "/bin/sh" });
  assert.deepEqual(messages, [
    `Dropped hook "task.failed": script "/bin/sh" is joined to the plugin dir, as ty joins it, ` +
    `and "${join(dir, "bin/sh")}" does not exist`,
  ]);
});

Deno.test("loadPlugins() keeps a hook whose script is a symlink leading out of the plugin dir", async () => {
  const outside = await makeTree({ "evil.sh": NOOP_SCRIPT });
  const { hooks, messages, dir } = await loadWithHooks(
    { "task.failed": "link.sh" },
    {},
    async (d) => {
      await Deno.symlink(join(outside, "evil.sh"), join(d, "link.sh"));
    },
  );
  assert.deepEqual(messages, []);
  assert.equal(hooks["task.failed"], join(dir, "link.sh"));
});

Deno.test("loadPlugins() keeps a symlink that stays inside the plugin dir, at its own path", async () => {
  const { hooks, messages, dir } = await loadWithHooks(
    { "task.failed": "alias.sh" },
    {},
    async (d) => {
      await Deno.symlink("ok.sh", join(d, "alias.sh"));
    },
  );
  assert.deepEqual(messages, []);
  assert.equal(hooks["task.failed"], join(dir, "alias.sh"));
});

Deno.test("loadPlugins() drops a hook whose script is not a string", async () => {
  const { messages } = await loadWithHooks({ "task.failed": "[a.sh, b.sh]" });
  assert.deepEqual(messages, ['Dropped hook "task.failed": the script must be a path, not a list']);
});

Deno.test("loadPlugins() keeps an action whose script lies in a symlinked folder outside", async () => {
  const outside = await makeTree({ "bin/run.sh": NOOP_SCRIPT });
  const root = await makeTree({
    "p/plugin.yaml":
      "name: p\nactions:\n  - id: run\n    command: bin/run.sh\n  - id: ok\n    command: ok.sh\n",
    "p/ok.sh": NOOP_SCRIPT,
  });
  await Deno.symlink(join(outside, "bin"), join(root, "p", "bin"));
  const index = await loadPlugins(root);
  assert.deepEqual(index.plugins[0].actions.map((a) => a.id), ["run", "ok"]);
  assert.deepEqual(index.warnings, []);
});
