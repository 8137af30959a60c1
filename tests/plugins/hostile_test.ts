import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPlugins } from "../../lib/plugins/load.ts";
import { makeTree, NOOP_SCRIPT } from "../_cli.ts";

const GOOD = {
  "good/plugin.yaml": "name: good\nhooks:\n  task.done: a.sh\n",
  "good/a.sh": NOOP_SCRIPT,
};

/** Loads a tree holding `good` and one hostile plugin `bad`; returns bad's one warning. */
async function loadHostile(write: (dir: string) => Promise<void>): Promise<string> {
  const root = await makeTree(GOOD);
  const dir = join(root, "bad");
  await Deno.mkdir(dir);
  await write(dir);
  try {
    const index = await loadPlugins(root);
    assert.deepEqual(index.plugins.map((p) => p.name), ["good"]);
    assert.equal(index.warnings.length, 1, JSON.stringify(index.warnings));
    return index.warnings[0].message;
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

Deno.test("loadPlugins() refuses a 10 MB manifest with a warning", async () => {
  const message = await loadHostile(async (dir) => {
    const line = `# ${"x".repeat(98)}\n`;
    await Deno.writeTextFile(join(dir, "plugin.yaml"), "name: big\n" + line.repeat(100_000));
  });
  assert.equal(message, 'Skipped plugin in "bad": plugin.yaml is larger than 262144 bytes');
});

Deno.test("loadPlugins() survives a YAML alias bomb with a warning", async () => {
  const message = await loadHostile(async (dir) => {
    const levels = ["a: &a [x, x, x, x, x, x, x, x, x, x]"];
    for (let i = 1; i < 10; i++) {
      const previous = String.fromCharCode(96 + i);
      const alias = Array(10).fill(`*${previous}`).join(", ");
      levels.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${alias}]`);
    }
    await Deno.writeTextFile(join(dir, "plugin.yaml"), `name: bomb\n${levels.join("\n")}\n`);
  });
  assert.equal(
    message,
    'Skipped plugin in "bad": cannot parse plugin.yaml: too many aliases (a YAML bomb?)',
  );
});

Deno.test("loadPlugins() survives deeply nested YAML with a warning", async () => {
  const message = await loadHostile(async (dir) => {
    const depth = 100_000;
    await Deno.writeTextFile(
      join(dir, "plugin.yaml"),
      `name: deep\nx: ${"[".repeat(depth)}${"]".repeat(depth)}\n`,
    );
  });
  assert.match(message, /^Skipped plugin in "bad": /);
});

Deno.test("loadPlugins() skips a plugin whose name holds a NUL byte", async () => {
  const message = await loadHostile(async (dir) => {
    await Deno.writeTextFile(
      join(dir, "plugin.yaml"),
      'name: "a\\0b"\nhooks:\n  task.done: a.sh\n',
    );
    await Deno.writeTextFile(join(dir, "a.sh"), NOOP_SCRIPT, { mode: 0o755 });
  });
  assert.equal(message, 'Skipped plugin in "bad": "name" contains control characters');
});

Deno.test("loadPlugins() skips a plugin whose manifest holds a raw control character, as ty's YAML reader refuses it", async () => {
  for (
    const [raw, code] of [["\0", "0000"], ["\x1b", "001B"], ["\x7f", "007F"], ["\x9b", "009B"]]
  ) {
    const message = await loadHostile(async (dir) => {
      await Deno.writeTextFile(
        join(dir, "plugin.yaml"),
        `name: p\nhooks:\n  task.done: a.sh\n  task.failed: "a${raw}.sh"\n`,
      );
      await Deno.writeTextFile(join(dir, "a.sh"), NOOP_SCRIPT, { mode: 0o755 });
    });
    assert.equal(
      message,
      `Skipped plugin in "bad": plugin.yaml holds the control character U+${code}, which YAML does not allow`,
    );
  }
});

Deno.test("loadPlugins() skips a manifest in UTF-16 without a byte order mark or in UTF-32, naming the encoding", async () => {
  const text = "name: p\nhooks:\n  task.done: a.sh\n";
  const cases: [string, number[]][] = [
    ["UTF-16LE text without a byte order mark", [...text].flatMap((c) => [c.charCodeAt(0), 0])],
    ["UTF-16BE text without a byte order mark", [...text].flatMap((c) => [0, c.charCodeAt(0)])],
    ["UTF-32LE text", [0xff, 0xfe, 0, 0, ...[...text].flatMap((c) => [c.charCodeAt(0), 0, 0, 0])]],
    ["UTF-32BE text", [0, 0, 0xfe, 0xff, ...[...text].flatMap((c) => [0, 0, 0, c.charCodeAt(0)])]],
  ];
  for (const [encoding, bytes] of cases) {
    const message = await loadHostile(async (dir) => {
      await Deno.writeFile(join(dir, "plugin.yaml"), new Uint8Array(bytes));
      await Deno.writeTextFile(join(dir, "a.sh"), NOOP_SCRIPT, { mode: 0o755 });
    });
    assert.equal(
      message,
      `Skipped plugin in "bad": plugin.yaml is ${encoding}, which ty does not read (hint: save it as UTF-8)`,
    );
  }
});

Deno.test("loadPlugins() does not block on a plugin.yaml that is a FIFO", async () => {
  const message = await loadHostile(async (dir) => {
    const mkfifo = await new Deno.Command("mkfifo", { args: [join(dir, "plugin.yaml")] }).output();
    assert.equal(mkfifo.code, 0);
  });
  assert.equal(message, 'Skipped plugin in "bad": plugin.yaml is not a regular file');
});

Deno.test("loadPlugins() does not block on a plugin.yaml that links to a FIFO", async () => {
  const message = await loadHostile(async (dir) => {
    const mkfifo = await new Deno.Command("mkfifo", { args: [join(dir, "fifo")] }).output();
    assert.equal(mkfifo.code, 0);
    await Deno.symlink("fifo", join(dir, "plugin.yaml"));
  });
  assert.equal(message, 'Skipped plugin in "bad": plugin.yaml is not a regular file');
});

Deno.test("loadPlugins() skips a plugin.yaml that is not valid UTF-8", async () => {
  const message = await loadHostile(async (dir) => {
    await Deno.writeFile(
      join(dir, "plugin.yaml"),
      new Uint8Array([0x6e, 0x3a, 0x20, 0xff, 0xfe, 0x0a]),
    );
  });
  assert.equal(message, 'Skipped plugin in "bad": plugin.yaml is not valid UTF-8');
});

Deno.test("loadPlugins() skips a manifest that is a list, or empty", async () => {
  assert.equal(
    await loadHostile((dir) => Deno.writeTextFile(join(dir, "plugin.yaml"), "- name: x\n")),
    'Skipped plugin in "bad": plugin.yaml must be a map of keys to values',
  );
  assert.equal(
    await loadHostile((dir) => Deno.writeTextFile(join(dir, "plugin.yaml"), "")),
    'Skipped plugin in "bad": plugin.yaml is empty',
  );
});

Deno.test("loadPlugins() skips a plugin.yaml that is a folder", async () => {
  const message = await loadHostile((dir) => Deno.mkdir(join(dir, "plugin.yaml")));
  assert.equal(message, 'Skipped plugin in "bad": plugin.yaml is not a regular file');
});
