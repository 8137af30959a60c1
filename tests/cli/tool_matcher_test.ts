/**
 * `tools` matchers seen from the command line: the expression is searched for in the tool name,
 * and no expression can make `tool pre` hang (both our matcher and RE2, for the syntax ours does
 * not take, run in time linear in the name).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTree, spawnCli, tempDir } from "../_cli.ts";
import { settled } from "../_index.ts";

// Blocks every call it is asked about, so "allow" means the hook was not asked.
const BLOCKING_GUARD = `#!/bin/sh\necho '{"action":"block","reason":"asked"}'\n`;

/**
 * A plugins dir whose one guard has the `tools` setting `tools`, and the environment of a home of
 * its own to run `tool pre` on it with (its index cache in it).
 */
async function guardedBy(tools: string): Promise<{ plugins: string; env: Record<string, string> }> {
  const plugins = await makeTree({
    "g/plugin.yaml": [
      "name: g",
      "hooks: {pre_tool_call: guard.sh}",
      "tyhooks:",
      `  pre_tool_call: {tools: ${JSON.stringify(tools)}}`,
      "",
    ].join("\n"),
    "g/guard.sh": BLOCKING_GUARD,
  });
  const home = await tempDir();
  return { plugins, env: { HOME: home, XDG_CACHE_HOME: join(home, "cache") } };
}

/** `tool pre --tool <tool>`, killed if it has not answered in 30 s. */
async function pre(plugins: string, tool: string, env: Record<string, string>) {
  const child = spawnCli(["tool", "pre", "--tool", tool, "--plugins-dir", plugins], { env });
  // A regex engine that backtracks never yields to a signal handler: only SIGKILL ends it.
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  try {
    const out = await child.output();
    const stdout = new TextDecoder().decode(out.stdout);
    const stderr = new TextDecoder().decode(out.stderr);
    assert.equal(out.signal, null, `tool pre ${tool} was still running after 30 s`);
    return { code: out.code, verdict: stdout ? JSON.parse(stdout) : undefined, stderr };
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("tyhooks tool pre with tools ^(B+)+$ answers for a 40-character tool name, asking the hook only when the name matches", async () => {
  // Cold (manifest read), then warm (cached index), as every spawn-time call after the first.
  const { plugins, env } = await guardedBy("^(B+)+$");
  await settled();
  for (const round of ["cold", "warm"]) {
    const skipped = await pre(plugins, "B".repeat(39) + "x", env);
    assert.equal(skipped.code, 0, `${round}: ${skipped.stderr}`);
    assert.deepEqual(skipped.verdict, { action: "allow", reason: "" }, round);
    const asked = await pre(plugins, "B".repeat(40), env);
    assert.equal(asked.code, 2, `${round}: ${asked.stderr}`);
    assert.deepEqual(asked.verdict, { action: "block", reason: "asked" }, round);
  }
});

Deno.test("tyhooks tool pre asks a hook whose tools expression is found inside the tool name", async () => {
  const { plugins, env } = await guardedBy("bash|sh");
  const verdicts = [];
  for (const tool of ["run_shell_command", "run_bash", "read_file"]) {
    const r = await pre(plugins, tool, env);
    verdicts.push([tool, r.verdict?.action]);
  }
  assert.deepEqual(verdicts, [
    ["run_shell_command", "block"],
    ["run_bash", "block"],
    ["read_file", "allow"],
  ]);
});

Deno.test("tyhooks tool pre asks a hook whose tools expression is beyond the common subset as RE2 would", async () => {
  // Case folding and word boundaries are RE2's alone.
  const { plugins, env } = await guardedBy("(?i)^bash$|\\bsh\\b");
  await settled();
  for (const round of ["cold", "warm"]) {
    const verdicts = [];
    for (const tool of ["BASH", "run_bash", "sh", "ssh"]) {
      const r = await pre(plugins, tool, env);
      assert.doesNotMatch(r.stderr, /Ignored/, `${round} ${tool}`);
      verdicts.push([tool, r.verdict?.action]);
    }
    assert.deepEqual(verdicts, [
      ["BASH", "block"],
      ["run_bash", "allow"],
      ["sh", "block"],
      ["ssh", "allow"],
    ], round);
  }
});
