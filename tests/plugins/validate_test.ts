import assert from "node:assert/strict";
import { join } from "node:path";
import { validatePlugins } from "../../lib/plugins/validate.ts";
import { manifestJsonSchema } from "../../lib/plugins/manifest_schema.ts";
import { makeTree, NOOP_SCRIPT } from "../_cli.ts";

/**
 * Validates a tree and returns its problems as `relative-path:line:col: message`; `prepare` may
 * change the tree first.
 */
async function lint(
  files: Record<string, string>,
  prepare?: (root: string) => Promise<void>,
): Promise<{ ok: boolean; lines: string[] }> {
  const root = await makeTree(files);
  await prepare?.(root);
  const result = await validatePlugins(root);
  return {
    ok: result.ok,
    lines: result.problems.map((p) =>
      `${p.path.slice(root.length + 1)}:${p.line}:${p.column}: ${p.message}`
    ),
  };
}

const twin = { "plugin.yaml": "name: twin\nhooks:\n  task.done: a.sh\n", "a.sh": NOOP_SCRIPT };

/** Trees and every problem {@linkcode lint} reports on each: `ok` is whether there is none. */
const REPORTS: { name: string; files: Record<string, string>; lines: string[] }[] = [
  {
    name: "validatePlugins() passes a clean plugin",
    files: {
      "p/plugin.yaml": "name: p\nversion: 0.1.0\nhooks:\n  task.done: a.sh\n",
      "p/a.sh": NOOP_SCRIPT,
    },
    lines: [],
  },
  {
    name: "validatePlugins() reports an unknown key such as hook: with a suggestion",
    files: {
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
      "p/a.sh": NOOP_SCRIPT,
    },
    lines: [
      'p/plugin.yaml:2:1: Unknown key "hook": did you mean "hooks"?',
      'p/plugin.yaml:5:5: Dropped action "x": "command" is missing',
      'p/plugin.yaml:6:5: Unknown key "comand" in "actions[0]": did you mean "command"?',
    ],
  },
  {
    name: "validatePlugins() reports a type the loader tolerates, such as an unquoted version",
    files: {
      "p/plugin.yaml": "name: p\nversion: 1.10\nhooks:\n  task.done: a.sh\n",
      "p/a.sh": NOOP_SCRIPT,
    },
    lines: ['p/plugin.yaml:2:10: "version" must be a string, not a number'],
  },
  {
    name: "validatePlugins() reports an event name that looks like a typo",
    files: {
      "p/plugin.yaml": "name: p\nhooks:\n  task.don: a.sh\n  my.custom.event: a.sh\n",
      "p/a.sh": NOOP_SCRIPT,
    },
    lines: ['p/plugin.yaml:3:3: Unknown event "task.don": did you mean "task.done"?'],
  },
  {
    name: "validatePlugins() lists every dropped entry of a skipped plugin, then why it is skipped",
    files: { "p/plugin.yaml": "name: p\nhooks:\n  task.done: a.sh\n  task.failed: b.sh\n" },
    lines: [
      'p/plugin.yaml:1:7: Skipped plugin "p" in "p": no usable hook, action, service, workflow or ' +
      'routine (dropped hook "task.done": script "a.sh" does not exist; hook "task.failed": ' +
      'script "b.sh" does not exist)',
      'p/plugin.yaml:3:14: Dropped hook "task.done": script "a.sh" does not exist',
      'p/plugin.yaml:4:16: Dropped hook "task.failed": script "b.sh" does not exist',
    ],
  },
  {
    name: "validatePlugins() reports broken YAML at its line and column",
    files: { "p/plugin.yaml": "name: p\nname: q\n" },
    lines: ['p/plugin.yaml:2:1: Skipped plugin in "p": invalid YAML: Map keys must be unique'],
  },
  {
    name:
      "validatePlugins() reports a plugin whose name an earlier plugin has, where its name is written",
    files: {
      ...Object.fromEntries(Object.entries(twin).map(([k, v]) => [`a/${k}`, v])),
      ...Object.fromEntries(Object.entries(twin).map(([k, v]) => [`b/twin/${k}`, v])),
    },
    lines: [
      'b/twin/plugin.yaml:1:7: Plugin name "twin" is also used by the plugin in "a": both load, ' +
      'as in ty, and "plugins run" (or any command naming it) takes that one (hint: rename one)',
    ],
  },
  {
    name: "validatePlugins() reports a second action with an id an earlier action has",
    files: {
      "p/plugin.yaml": [
        "name: p",
        "actions:",
        "  - id: sync",
        "    command: a.sh",
        "  - id: sync",
        "    command: a.sh",
      ].join("\n") + "\n",
      "p/a.sh": NOOP_SCRIPT,
    },
    lines: [
      'p/plugin.yaml:5:9: Action id "sync" is also used by an earlier action: both are listed, as ' +
      "in ty, and running it runs the first (hint: give each its own id)",
    ],
  },
];

for (const { name, files, lines } of REPORTS) {
  Deno.test(name, async () => {
    assert.deepEqual(await lint(files), { ok: lines.length === 0, lines });
  });
}

Deno.test("validatePlugins() reports a script without a #! line and one whose #! line ends in a carriage return, with the fix", async () => {
  const result = await lint({
    "p/plugin.yaml": [
      "name: p",
      "hooks:",
      "  task.done: plain.sh",
      "  task.failed: ok.sh",
      "actions:",
      "  - id: sync",
      "    command: crlf.sh",
      "  - id: bin",
      "    command: bin/true",
    ].join("\n") + "\n",
    "p/plain.sh": "echo no interpreter\n",
    "p/crlf.sh": "#!/bin/sh\r\necho hi\r\n",
    "p/ok.sh": NOOP_SCRIPT,
  }, async (root) => {
    await Deno.chmod(join(root, "p/plain.sh"), 0o755);
    await Deno.mkdir(join(root, "p/bin"));
    await Deno.copyFile("/bin/true", join(root, "p/bin/true")); // A binary: nothing to report.
  });
  assert.equal(result.lines.length, 2, result.lines.join("\n"));
  assert.equal(
    result.lines[0],
    'p/plugin.yaml:3:14: Hook "task.done": script "plain.sh" does not start with a "#!" line ' +
      "naming an interpreter, so it cannot be started (exec format error, as under ty) (hint: " +
      'make its first line "#!/bin/sh", or the interpreter it is written for)',
  );
  assert.match(
    result.lines[1],
    /^p\/plugin\.yaml:7:14: Action "sync": script "crlf\.sh" has a "#!" line ending in a carriage return \(CRLF line ends\), so it cannot be started \(hint: dos2unix ".*\/p\/crlf\.sh", or sed -i 's\/\\r\$\/\/' ".*\/p\/crlf\.sh"\)$/,
  );
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
