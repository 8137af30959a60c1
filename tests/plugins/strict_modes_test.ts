/** StrictModes: plugin dirs and scripts another user could write are loaded, with a warning. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { validatePlugins } from "../../lib/plugins/validate.ts";
import { cli, makeTree, NEEDS_ROOT, NOOP_SCRIPT } from "../_cli.ts";

const FILES = {
  "p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\nactions:\n  - id: go\n    command: a.sh\n",
  "p/a.sh": NOOP_SCRIPT,
};

async function withTree(fn: (root: string) => Promise<void>): Promise<void> {
  const root = await makeTree(FILES);
  try {
    await fn(root);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("a plugin dir and a script writable by group are warned about, and still load", async () => {
  await withTree(async (root) => {
    await Deno.chmod(join(root, "p"), 0o775);
    await Deno.chmod(join(root, "p", "a.sh"), 0o775);
    const index = await loadPlugins(root);
    assert.deepEqual(index.plugins.map((p) => p.name), ["p"]);
    const script = JSON.stringify(join(root, "p", "a.sh"));
    const dir = JSON.stringify(await Deno.realPath(join(root, "p")));
    assert.deepEqual(index.warnings.map((w) => `${w.line}:${w.column} ${w.message}`), [
      `null:null Plugin dir "p" is writable by group or others (mode 0775) (hint: chmod go-w ${dir})`,
      `3:14 Hook "task.done": script "a.sh" is writable by group or others (mode 0775) ` +
      `(hint: chmod go-w ${script})`,
      `6:14 Action "go": script "a.sh" is writable by group or others (mode 0775) ` +
      `(hint: chmod go-w ${script})`,
    ]);
    const result = await validatePlugins(root);
    assert.equal(result.ok, false);
    assert.equal(result.problems.length, 3);
    // Loading logs them at warn level.
    const listed = await cli(["plugins", "list", "--plugins-dir", root]);
    assert.match(listed.stderr, /tyhooks: warn: Plugin dir "p" is writable by group or others/);
  });
});

Deno.test("a manifest, or a collection dir above the plugin, that others could write is warned about", async () => {
  const root = await makeTree({
    "team/p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\n",
    "team/p/a.sh": NOOP_SCRIPT,
  });
  try {
    // Another user could rewrite the manifest (and so drop a guard), or swap the plugin dir.
    await Deno.chmod(join(root, "team", "p", "plugin.yaml"), 0o666);
    await Deno.chmod(join(root, "team"), 0o777);
    const index = await loadPlugins(root);
    assert.deepEqual(index.plugins.map((p) => p.name), ["p"]);
    const manifest = JSON.stringify(await Deno.realPath(join(root, "team", "p", "plugin.yaml")));
    assert.deepEqual(index.warnings.map((w) => w.message), [
      `Manifest "team/p/plugin.yaml" is writable by group or others (mode 0666) (hint: chmod go-w ${manifest})`,
      `Dir "team" above plugin "team/p" is writable by group or others (mode 0777) (hint: chmod go-w ${
        JSON.stringify(join(root, "team"))
      })`,
    ]);
    assert.equal((await validatePlugins(root)).problems.length, 2);
  } finally {
    await Deno.remove(root, { recursive: true });
  }
});

Deno.test({
  name: "a plugin dir and a script owned by another user are warned about",
  ...NEEDS_ROOT,
  async fn() {
    // Skipped unless run as root: giving a file to another user needs chown.
    await withTree(async (root) => {
      await Deno.chown(join(root, "p"), 65534, null);
      await Deno.chown(join(root, "p", "a.sh"), 65534, null);
      const index = await loadPlugins(root);
      assert.deepEqual(index.plugins.map((p) => p.name), ["p"]);
      const messages = index.warnings.map((w) => w.message);
      assert.equal(messages.length, 3);
      for (const message of messages) {
        assert.match(message, /is owned by user 65534, not by the current user \(0\) or root/);
      }
    });
  },
});

Deno.test("a plugin owned by root loads without a warning", async () => {
  await withTree(async (root) => {
    const index = await loadPlugins(root);
    assert.deepEqual(index.warnings, []);
  });
});
