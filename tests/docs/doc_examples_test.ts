/**
 * Every JSDoc example in lib/ is type-checked and run (`deno test --doc`).
 *
 * `deno test --doc` adds to each example an import of every export of the module it documents,
 * used or not, and deno.json's `noUnusedLocals` rejects those imports (TS6133/TS6192,
 * denoland/deno#26900). So the examples run under a config derived from deno.json with only
 * `noUnusedLocals` and `noUnusedParameters` turned off, written to a temp dir: the repository keeps
 * one config, and the library itself stays checked with both options by `deno check`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { ROOT, tempDir } from "../_cli.ts";
import { runScript } from "../../lib/process/run_script.ts";

async function docTestConfig(dir: string): Promise<string> {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const path = join(dir, "deno.json");
  await Deno.writeTextFile(
    path,
    JSON.stringify({
      imports: config.imports,
      nodeModulesDir: config.nodeModulesDir,
      compilerOptions: {
        ...config.compilerOptions,
        noUnusedLocals: false,
        noUnusedParameters: false,
      },
      // The repository's lockfile, read-only: the run resolves exactly what the tests use.
      lock: { path: join(ROOT, "deno.lock"), frozen: true },
    }),
  );
  return path;
}

Deno.test("every example in lib/ type-checks and runs, and none of its console.assert calls fails", async () => {
  const dir = await tempDir({ prefix: "tyhooks-doc-test-" });
  const config = await docTestConfig(dir);
  await Deno.mkdir(join(dir, "tmp"));
  const r = await runScript(Deno.execPath(), {
    args: ["test", "--doc", "--allow-all", "--config", config, "lib/"],
    cwd: ROOT,
    // The examples make temp dirs of their own: they land in `dir`, removed below.
    env: { NO_COLOR: "1", TMPDIR: join(dir, "tmp") },
    timeoutMs: 300_000,
    maxOutputBytes: 16 * 1024 * 1024,
  });
  const output = r.stdout + r.stderr;
  assert.equal(r.exit_code, 0, output);
  assert.match(r.stdout, /^ok \| [1-9]\d* passed \| 0 failed/m);
  // A failed console.assert only prints (the examples use it because it needs no import); the
  // lines before the message name the example.
  const failed = output.indexOf("Assertion failed");
  assert.equal(failed, -1, output.slice(Math.max(0, failed - 300), failed + 200));
});
