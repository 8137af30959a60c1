/**
 * The library's documentation: `deno doc --lint lib/mod.ts` finds nothing (every export and
 * public member documented, every type the public API names public, every export explicitly
 * typed), and every export has an `@example`.
 *
 * No finding is tolerated, not even a reference to a dependency's type: Deno calls those private
 * (denoland/deno#27364), which is why the schemas are exported as `Schema<T>` (lib/wire/json.ts)
 * rather than with zod's types.
 */

import assert from "node:assert/strict";
import { ROOT } from "../_cli.ts";
import { runScript } from "../../lib/process/run_script.ts";

/** `deno doc <flag> lib/mod.ts`, its output kept up to 64 MiB. */
function denoDoc(flag: string) {
  return runScript(Deno.execPath(), {
    args: ["doc", flag, "lib/mod.ts"],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    timeoutMs: 120_000,
    maxOutputBytes: 64 * 1024 * 1024,
  });
}

Deno.test("deno doc --lint lib/mod.ts finds nothing", async () => {
  const r = await denoDoc("--lint");
  const output = r.stdout + r.stderr;
  // Each finding: `error[code]: message`, then `--> file:line:col` on the next line.
  const findings = [...output.matchAll(/^error\[([\w-]+)\]: (.*)\n\s*--> (.*)$/gm)].map((
    [, code, message, where],
  ) => `${code}: ${message} (${where.replace(`${ROOT}/`, "")})`);
  assert.deepEqual(findings, []);
  assert.equal(r.exit_code, 0, output);
});

// CONVENTIONS: examples teach where there is something to run: functions and classes. An
// interface or a constant gets a line, not an example.
Deno.test("every function and class lib/mod.ts exports has an @example", async () => {
  const r = await denoDoc("--json");
  assert.equal(r.exit_code, 0, r.stderr);
  assert.ok(!r.stdout_truncated);
  type Declaration = {
    kind: string;
    location: { filename: string; line: number };
    jsDoc?: { tags?: { kind: string }[] };
  };
  const doc = JSON.parse(r.stdout) as {
    nodes: Record<string, { symbols: { name: string; declarations: Declaration[] }[] }>;
  };
  const symbols = Object.values(doc.nodes).flatMap((module) => module.symbols);
  assert.ok(symbols.length > 50, `only ${symbols.length} exports found`);
  const without = symbols.flatMap(({ name, declarations }) =>
    declarations
      .filter((d) => d.kind === "function" || d.kind === "class")
      .filter((d) => !d.jsDoc?.tags?.some((tag) => tag.kind === "example"))
      .map((d) =>
        `${name} (${d.location.filename.replace(`file://${ROOT}/`, "")}:${d.location.line})`
      )
  );
  assert.deepEqual(without, []);
});
