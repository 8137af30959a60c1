/**
 * The plain-YAML reader against the yaml package: on every text it reads, it must give exactly
 * the data yaml gives (lenient and typed, key order included); everything else it must leave to
 * yaml. Inputs: every manifest in plugins-example/ and in the tests' sources, hand-picked edge
 * cases, and many single-character mutations of them all.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { parseYaml } from "../../lib/plugins/read_manifest.ts";
import { readPlain } from "../../lib/plugins/plain_yaml.ts";

const REPO = new URL("../../", import.meta.url).pathname;

/** Decodes the JavaScript string literal `literal` (quotes included); null if it is not plain. */
function decodeLiteral(literal: string): string | null {
  if (literal.startsWith("`") && literal.includes("${")) return null;
  const body = literal.slice(1, -1);
  const escapes: Record<string, string> = { n: "\n", t: "\t", r: "\r", 0: "\0", b: "\b" };
  return body.replace(/\\(x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|.)/g, (_, e: string) => {
    if (e.length > 1) return String.fromCharCode(parseInt(e.slice(1), 16));
    return escapes[e] ?? e;
  });
}

/** Every manifest written as a literal in the tests, and every plugin.yaml of the examples. */
function corpus(): string[] {
  const found = new Set<string>();
  const literal =
    /plugin\.yaml["'`]\]?\s*[:,]\s*("(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`(?:[^`\\]|\\.)*`)/g;
  const walk = (dir: string) => {
    for (const entry of Deno.readDirSync(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) walk(path);
      else if (entry.name === "plugin.yaml") found.add(Deno.readTextFileSync(path));
      else if (entry.name.endsWith(".ts")) {
        for (const m of Deno.readTextFileSync(path).matchAll(literal)) {
          const text = decodeLiteral(m[1]);
          if (text !== null) found.add(text);
        }
      }
    }
  };
  walk(join(REPO, "tests"));
  walk(join(REPO, "plugins-example"));
  return [...found];
}

const EDGES = [
  "name: a\n",
  "name: a",
  "name: a\n\n\n# end\n",
  "# lead\nname: a # trailing\n",
  "name: a#b\n",
  "name: 'it''s'\n",
  'name: "x: y # z"\n',
  'name: "a\\"b"\n',
  "name: a\nname: b\n",
  "name: ~\n",
  "name: null\nversion: Null\ndescription: NULL\n",
  "name: a\nversion: 1.10\n",
  "name: a\nversion: 0.1.0\n",
  "name: a\nversion: 1e3\n",
  "name: a\nversion: +12\n",
  "name: a\nversion: 0o17\n",
  "name: a\nversion: 0x1F\n",
  "name: a\nversion: .inf\n",
  "name: a\nversion: -.Inf\n",
  "name: a\nversion: .NaN\n",
  "name: a\nversion: 123456789012345678901234567890\n",
  "name: a\nversion: 1.\n",
  "name: a\nversion: .5\n",
  "name: a\ndescription: true\n",
  "name: a\ndescription: yes\n",
  "name: a\ndescription: on\n",
  "name: a\ndescription: 'true'\n",
  "name: true\n",
  "true: a\n",
  "null: a\n",
  "1: a\n",
  "__proto__: a\n",
  "name: a\nhooks:\n  task.done: a.sh\n  task.failed: 'b.sh'\n",
  "name: a\nhooks:\n    task.done: a.sh\n  task.failed: b.sh\n",
  "name: a\nhooks:\n  task.done: a.sh\n    more\n",
  "name: a\nhooks:\n  task.done:\n    a.sh\n",
  "name: a\nhooks:\n  task.done: a.sh\n    # comment\nversion: 1\n",
  "name: a\nhooks:\n# comment\n  task.done: a.sh\n",
  "name: a\nhooks:\n",
  "name: a\nhooks: # none\nversion: 1\n",
  "name: a\nactions:\n- id: x\n  command: x.sh\n- id: y\n  command: y.sh\n",
  "name: a\nactions:\n  - id: x\n    label:\n    command: x.sh\n",
  "name: a\nactions:\n  -   id: x\n      command: x.sh\n",
  "name: a\nactions:\n  - id: x\n   command: x.sh\n",
  "name: a\nactions:\n  - id: x\n  - id: y\n",
  "name: a\nactions:\n  - x\n  - 'y'\n  - \"z\"\n",
  "name: a\nactions:\n  -\n    id: x\n",
  "name: a\nactions:\n  - - x\n",
  "name: a\nactions:\n  - id: x\n    command: x.sh\n  other: 1\n",
  "name: a\nservices:\n  - name: s\n    command: ./s --port 80\n    env: [\"A=1\", 'B=2', C=3]\n",
  "name: a\nservices:\n  - name: s\n    env:\n    - A=1\n    restart: never\n",
  "name: a\nservices:\n  - name: s\n    env: []\n",
  "name: a\nservices:\n  - name: s\n    env: [ ]\n",
  "name: a\nservices:\n  - name: s\n    env: [a, ]\n",
  "name: a\nservices:\n  - name: s\n    env: [a,,b]\n",
  "name: a\nservices:\n  - name: s\n    env: [a, [b]]\n",
  "name: a\nservices:\n  - name: s\n    env: [1, true, null, ~, a b]\n",
  "name: a\nservices:\n  - name: s\n    env: [a]  # c\n",
  "name: a\nservices:\n  - name: s\n    env: [a]# c\n",
  "name: a\nservices:\n  - name: s\n    env: [a: b]\n",
  "name: a\ntyhooks:\n  pre_tool_call: {persistent: true}\n",
  "name: a\ntyhooks:\n  pre_tool_call:\n    persistent: true\n    timeout: 2s\n    max_procs: 2\n",
  "name: a\nhooks: &h\n  task.done: a.sh\n",
  "name: a\nhooks: !!map\n  task.done: a.sh\n",
  "name: a\ndescription: |\n  text\n",
  "name: a\ndescription: >\n  text\n",
  "---\nname: a\n",
  "name: a\n---\nname: b\n",
  "name: a\n...\n",
  "%YAML 1.2\n---\nname: a\n",
  "name: a\r\n",
  "name:\ta\n",
  "\tname: a\n",
  " name: a\n",
  "name : a\n",
  "name:a\n",
  "name: a: b\n",
  "name: a:\n",
  "name: http://x/y\n",
  "name: -a\n",
  "name: - a\n",
  "name: ?a\n",
  "name: @a\n",
  "name: `a`\n",
  "name: a\ufeff\n",
  "\ufeffname: a\n",
  "name: caf\u00e9 \u{1F600}\n",
  "name: a\u0085b\n",
  "name: a\u2028b\n",
  "name: 'unterminated\n",
  'name: "a" b\n',
  "name: 'a'#c\n",
  "name: a\n  \n",
  "- a\n",
  "a\n",
  "",
  "# only a comment\n",
  `${"k".repeat(1100)}: a\n`,
  "name: a\nx:\n  y:\n    z:\n      w: 1\n",
  "name: a\nx:\n- a\n- b\ny: 1\n",
  "name: a\nx:\n  - a\n- b\n",
  // Trailing white space that is not YAML's: yaml keeps it, so must the plain reader.
  "name: g\nhooks:\n  pre_tool_call: guard.sh\u00a0\n",
  "name: g\u3000 # c\nhooks: {}\n",
  "name: g\nx: [a\u202f, b\u1680]\n",
];

const encoder = new TextEncoder();

/** Compares two values exactly, key order and NaN included. */
function same(a: unknown, b: unknown): boolean {
  if (typeof a !== typeof b) return false;
  if (typeof a === "number") return Object.is(a, b);
  if (a === null || typeof a !== "object") return a === b;
  if (b === null || Array.isArray(a) !== Array.isArray(b)) return false;
  if (Object.getPrototypeOf(a) !== Object.getPrototypeOf(b)) return false;
  const left = Object.entries(a);
  const right = Object.entries(b as object);
  return left.length === right.length &&
    left.every(([k, v], i) => k === right[i][0] && same(v, right[i][1]));
}

/** Reads `text` both ways; returns whether the plain reader took it. */
async function check(text: string): Promise<boolean> {
  const plain = readPlain(text);
  if (plain === null) return false;
  const full = await parseYaml(text);
  const shown = JSON.stringify(text);
  assert.ok(full.ok, `the plain reader read what yaml refuses: ${shown}`);
  assert.equal(full.extraDocuments, null, shown);
  assert.ok(
    same(plain.value, full.lenient),
    `lenient differs for ${shown} ${[...text].map((c) => c.charCodeAt(0))} ${
      JSON.stringify(plain.value)
    } ${JSON.stringify(full.lenient)}`,
  );
  const typed = readPlain(text, { typed: true });
  assert.ok(typed !== null && same(typed.value, full.typed), `typed differs for ${shown}`);
  assert.equal(plain.typesDiffer, !same(full.lenient, full.typed), shown);
  return true;
}

Deno.test("readPlain() reads every example and test manifest it takes exactly as yaml does", async () => {
  const texts = [...corpus(), ...EDGES];
  let plain = 0;
  for (const text of texts) if (await check(text)) plain++;
  // Control: most real manifests are plain, so the comparison above is not vacuous.
  assert.ok(texts.length > 100, `${texts.length} manifests found`);
  assert.ok(plain > texts.length / 2, `${plain} of ${texts.length} read as plain`);
});

Deno.test("readPlain() takes the plain examples and leaves the others to yaml", () => {
  const examples = join(REPO, "plugins-example");
  const plain = [...Deno.readDirSync(examples)].filter((e) => e.isDirectory).map((e) => e.name)
    .filter((name) => readPlain(Deno.readTextFileSync(join(examples, name, "plugin.yaml"))))
    .sort();
  // tool-guard's settings are a flow map over several lines.
  assert.deepEqual(plain, [
    "audit-log",
    "fleet-placement",
    "heartbeat",
    "notifier",
    "quota-router",
    "tracker-sync",
  ]);
  for (const text of ["name: a\nhooks: &h\n  x: y\n", "name: a\nname: b\n", "name:\ta\n"]) {
    assert.equal(readPlain(text), null, text);
  }
});

Deno.test("readPlain() agrees with yaml on 20,000 one-character mutations of those manifests", async () => {
  const texts = [...corpus(), ...EDGES].filter((t) =>
    t.length > 0 && encoder.encode(t).length < 600
  );
  const alphabet = [..." :#-\"'[],\n\ta1.~&*!|>{}%@`?\\eTn_", "\u00e9", "\u00a0", "\u3000"];
  let seed = 12345;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed % n;
  };
  let plain = 0;
  for (let i = 0; i < 20_000; i++) {
    const text = texts[next(texts.length)];
    const at = next(text.length + 1);
    const c = alphabet[next(alphabet.length)];
    const op = next(3);
    const mutated = op === 0
      ? text.slice(0, at) + c + text.slice(at)
      : op === 1
      ? text.slice(0, at) + c + text.slice(at + 1)
      : text.slice(0, at) + text.slice(at + 1);
    if (await check(mutated)) plain++;
  }
  // Control: many mutations stay plain, so this compares rather than only falls back.
  assert.ok(plain > 5_000, `${plain} of 20,000 read as plain`);
});
