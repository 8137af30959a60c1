/**
 * The library's documentation: `deno doc --lint lib/mod.ts` (every export and public member
 * documented, every type the public API names public, every export explicitly typed), and an
 * `@example` on every export.
 *
 * One kind of finding is tolerated: a reference to a dependency's type (zod's `ZodObject`,
 * `output`, ...). Deno 2.9 calls any type outside the documented package "private"
 * (denoland/deno#27364), and the zod schemas are public on purpose, typed with zod's own types.
 * A name the test cannot find declared anywhere in lib/ is such a type.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT } from "../_cli.ts";
import { runScript } from "../../lib/process/run_script.ts";

async function namesDeclaredIn(dir: string): Promise<Set<string>> {
  const names = new Set<string>();
  for await (const entry of Deno.readDir(dir)) {
    const path = join(dir, entry.name);
    if (entry.isDirectory) {
      for (const name of await namesDeclaredIn(path)) names.add(name);
    } else if (entry.name.endsWith(".ts")) {
      const text = await Deno.readTextFile(path);
      // Top-level declarations only: a type the public API names is declared at the top level.
      const declarations =
        /^(?:export\s+)?(?:declare\s+)?(?:interface|type|class|enum|const|let|function)\s+([\w$]+)/gm;
      for (const [, name] of text.matchAll(declarations)) names.add(name);
    }
  }
  return names;
}

Deno.test("deno doc --lint lib/mod.ts finds nothing but references to zod's types", async () => {
  const r = await runScript(Deno.execPath(), {
    args: ["doc", "--lint", "lib/mod.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    timeoutMs: 120_000,
  });
  const output = r.stdout + r.stderr;
  // Each finding: `error[code]: message`, then `--> file:line:col` on the next line.
  const findings = [...output.matchAll(/^error\[([\w-]+)\]: (.*)\n\s*--> (.*)$/gm)].map((
    [, code, message, where],
  ) => `${code}: ${message} (${where.replace(`${ROOT}/`, "")})`);
  const total = output.match(/^error: Found (\d+) documentation lint errors?\./m);
  assert.equal(findings.length, total === null ? 0 : Number(total[1]), output);
  assert.equal(r.exit_code === 0, findings.length === 0, output);

  const ours = await namesDeclaredIn(join(ROOT, "lib"));
  const unexpected = findings.filter((finding) => {
    const dependencyType = finding.match(
      /^private-type-ref: .* references private type '(.+?)' \(/,
    );
    return dependencyType === null || ours.has(dependencyType[1]);
  });
  assert.deepEqual(unexpected, []);
});

Deno.test("every export of lib/mod.ts has an @example", async () => {
  const r = await runScript(Deno.execPath(), {
    args: ["doc", "--json", "lib/mod.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    timeoutMs: 120_000,
    maxOutputBytes: 64 * 1024 * 1024,
  });
  assert.equal(r.exit_code, 0, r.stderr);
  assert.ok(!r.stdout_truncated);
  type Declaration = {
    location: { filename: string; line: number };
    jsDoc?: { tags?: { kind: string }[] };
  };
  const doc = JSON.parse(r.stdout) as {
    nodes: Record<string, { symbols: { name: string; declarations: Declaration[] }[] }>;
  };
  const symbols = Object.values(doc.nodes).flatMap((module) => module.symbols);
  assert.ok(symbols.length > 100, `only ${symbols.length} exports found`);
  const without = symbols.flatMap(({ name, declarations }) =>
    declarations
      .filter((d) => !d.jsDoc?.tags?.some((tag) => tag.kind === "example"))
      .map((d) =>
        `${name} (${d.location.filename.replace(`file://${ROOT}/`, "")}:${d.location.line})`
      )
  );
  assert.deepEqual(without, []);
});
