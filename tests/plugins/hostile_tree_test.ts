/** Plugin trees built to make a load slow or endless: each load is bounded. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { MAX_DIRS } from "../../lib/plugins/discover.ts";
import { NOOP_SCRIPT, withTree } from "../_cli.ts";

const GOOD = {
  "good/plugin.yaml": "name: good\nhooks:\n  task.done: a.sh\n",
  "good/a.sh": NOOP_SCRIPT,
};

Deno.test("loadPlugins() visits each real directory once through 16 symlinks to the plugins dir", async () => {
  await withTree({
    ...GOOD,
    "team/x/plugin.yaml": "name: x\nhooks:\n  task.done: a.sh\n",
    "team/x/a.sh": NOOP_SCRIPT,
  }, async (root) => {
    for (let i = 0; i < 16; i++) await Deno.symlink(".", join(root, `self${i}`));
    await Deno.symlink("..", join(root, "team", "up"));
    await Deno.symlink("../team", join(root, "team", "again"));
    const index = await loadPlugins(root);
    // Without the real-path check, "good" is found once per path to it and the rest warn as
    // duplicates (16^4 paths at depth 5).
    assert.deepEqual(index.plugins.map((p) => p.dir), [
      join(root, "good"),
      join(root, "team", "x"),
    ]);
    assert.deepEqual(index.warnings, []);
  });
});

Deno.test("loadPlugins() loads a plugin reached by two links once, by its first path", async () => {
  await withTree(GOOD, async (root) => {
    await Deno.symlink("good", join(root, "a-link"));
    await Deno.symlink("good", join(root, "z-link"));
    const index = await loadPlugins(root);
    assert.deepEqual(index.plugins.map((p) => p.dir), [join(root, "a-link")]);
    assert.deepEqual(index.warnings, []);
  });
});

Deno.test("loadPlugins() stops after 10,000 directories with a warning", async () => {
  await withTree(GOOD, async (root) => {
    // 101 collections of 100 folders each: 10,100 folders at depth 2 (made by one mkdir -p).
    const script =
      `cd "$1" && for i in $(seq 0 100); do mkdir -p c$i && (cd c$i && mkdir $(seq -f d%g 0 99)); done`;
    const made = await new Deno.Command("sh", { args: ["-c", script, "sh", root] }).output();
    assert.ok(made.success, new TextDecoder().decode(made.stderr));
    const index = await loadPlugins(root);
    assert.deepEqual(index.plugins.map((p) => p.name), ["good"]);
    assert.deepEqual(index.warnings.map((w) => w.message), [
      `Stopped searching the plugins dir after ${MAX_DIRS} directories`,
    ]);
  });
});

Deno.test("loadPlugins() ends when its abort signal fires, with the signal's reason", async () => {
  await withTree(GOOD, async (root) => {
    const aborted = AbortSignal.abort(new Error("deadline"));
    await assert.rejects(loadPlugins(root, { signal: aborted }), /deadline/);
    // Fired while the load runs: the load rejects rather than returning a partial index.
    const controller = new AbortController();
    const load = loadPlugins(root, { signal: controller.signal });
    controller.abort(new Error("SIGTERM"));
    await assert.rejects(load, /SIGTERM/);
  });
});

Deno.test("loadPlugins() skips a manifest nested deeper than 64 levels, before parsing it", async () => {
  const flow = `name: deep\nhooks: {task.done: a.sh}\nx: ${"[".repeat(65)}${"]".repeat(65)}\n`;
  let block = "name: deep-block\nhooks:\n  task.done: a.sh\nx:\n";
  for (let i = 1; i <= 70; i++) block += `${"  ".repeat(i)}k:\n`;
  // A quote inside a plain scalar opens no quoted one: the brackets after it nest.
  const hidden = `name: hidden\nhooks: {task.done: a.sh}\nx: [a", ${"[".repeat(65)}${
    "]".repeat(66)
  }\n`;
  // JSON-style keys and values, and a doubled quote in a single-quoted one: the brackets inside
  // quotes are text, the ones around them nest (31 levels a round, 3 rounds).
  const quotedRound = (open: string, close: string) =>
    "[".repeat(30) + `{${open}a${close}:${open}${"]".repeat(30)}${close}, b: `;
  const closing = ("}" + "]".repeat(30)).repeat(3);
  const json = `name: json\nhooks: {task.done: a.sh}\nx: ${
    quotedRound('"', '"').repeat(3)
  }1${closing}\n`;
  const doubled = `name: doubled\nhooks: {task.done: a.sh}\nx: ${
    quotedRound("'", "''x'").repeat(3)
  }1${closing}\n`;
  // Quoted scalars hold brackets that do not nest.
  const fine = `name: fine\nhooks: {task.done: a.sh}\nx: ${"[".repeat(50)}${"]".repeat(50)}\n` +
    `y: ["${"[".repeat(70)}", '${"{".repeat(70)}', {k: "${"[".repeat(70)}"}]\n`;
  await withTree({
    "flow/plugin.yaml": flow,
    "flow/a.sh": NOOP_SCRIPT,
    "hidden/plugin.yaml": hidden,
    "hidden/a.sh": NOOP_SCRIPT,
    "json/plugin.yaml": json,
    "json/a.sh": NOOP_SCRIPT,
    "doubled/plugin.yaml": doubled,
    "doubled/a.sh": NOOP_SCRIPT,
    "block/plugin.yaml": block,
    "block/a.sh": NOOP_SCRIPT,
    "fine/plugin.yaml": fine,
    "fine/a.sh": NOOP_SCRIPT,
  }, async (root) => {
    const index = await loadPlugins(root);
    assert.deepEqual(index.plugins.map((p) => p.name), ["fine"]);
    assert.deepEqual(index.warnings.map((w) => w.message), [
      'Skipped plugin in "block": plugin.yaml is nested deeper than 64 levels',
      'Skipped plugin in "doubled": plugin.yaml is nested deeper than 64 levels',
      'Skipped plugin in "flow": plugin.yaml is nested deeper than 64 levels',
      'Skipped plugin in "hidden": plugin.yaml is nested deeper than 64 levels',
      'Skipped plugin in "json": plugin.yaml is nested deeper than 64 levels',
    ]);
  });
});

Deno.test("loadPlugins() refuses a 1 MiB nested manifest by its size, without reading it whole", async () => {
  const half = 512 * 1024;
  await withTree(
    { ...GOOD, "bad/plugin.yaml": `x: ${"[".repeat(half)}${"]".repeat(half)}\n` },
    async (root) => {
      const index = await loadPlugins(root);
      assert.deepEqual(index.plugins.map((p) => p.name), ["good"]);
      assert.deepEqual(index.warnings.map((w) => w.message), [
        'Skipped plugin in "bad": plugin.yaml is larger than 262144 bytes',
      ]);
    },
  );
});

Deno.test("loadPlugins() warns about a plugin dir or a plugins dir that is a link leading nowhere, and not about a missing plugins dir", async () => {
  await withTree(GOOD, async (root) => {
    await Deno.symlink("/nonexistent/blockall", join(root, "blockall"));
    await Deno.symlink("loop", join(root, "loop"));
    await Deno.symlink(join(root, "good", "a.sh"), join(root, "a-file"));
    // Emacs's lock beside a file it edits: by design a link to nowhere, never a plugin.
    await Deno.symlink("me@host.4242:1700000000", join(root, ".#notes.md"));
    const index = await loadPlugins(root);
    assert.deepEqual(index.plugins.map((p) => p.name), ["good"]);
    assert.deepEqual(index.warnings.map((w) => [w.path, w.message]), [
      [
        join(root, "blockall"),
        'Cannot read "blockall": it is a link to "/nonexistent/blockall", which leads nowhere',
      ],
      [
        join(root, "loop"),
        'Cannot read "loop": it is a link to "loop", which is a loop of links',
      ],
    ]);
    const linked = join(root, "linked");
    await Deno.symlink(join(root, "gone"), linked);
    const dangling = await loadPlugins(linked);
    assert.deepEqual(dangling.warnings.map((w) => [w.path, w.message]), [
      [
        linked,
        `Cannot read the plugins dir: it is a link to "${join(root, "gone")}", which leads nowhere`,
      ],
    ]);
    assert.deepEqual(await loadPlugins(join(root, "missing")), {
      dir: join(root, "missing"),
      plugins: [],
      warnings: [],
    });
  });
});
