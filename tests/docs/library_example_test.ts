/**
 * lib/README.md's "Using tyhooks as a library" example is tests/fixtures/library_example.ts, and it
 * works. (Its block is marked `ts ignore` there: `deno test --doc lib/` would check it without the
 * package name it imports; this test runs it instead.)
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { MAIN, makeTree, PERMISSION_FLAGS, ROOT, tempDir } from "../_cli.ts";
import { runScript } from "../../lib/process/run_script.ts";

const EXAMPLE = join(ROOT, "tests", "fixtures", "library_example.ts");

/** Runs the example as lib/README.md shows it, with the binary's permissions. */
function runExample(args: string[], env: Record<string, string>) {
  return runScript(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSION_FLAGS, EXAMPLE, ...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    timeoutMs: 30_000,
  });
}

Deno.test("lib/README.md's library example is tests/fixtures/library_example.ts, byte for byte", async () => {
  const readme = await Deno.readTextFile(join(ROOT, "lib", "README.md"));
  const example = await Deno.readTextFile(EXAMPLE);
  const blocks = [...readme.matchAll(/^```ts(?: ignore)?\n([\s\S]*?)^```$/gm)].map(([, body]) =>
    body
  );
  const shown = blocks.filter((block) => block.includes("tests/fixtures/library_example.ts"));
  assert.equal(shown.length, 1, "lib/README.md shows the example in exactly one ts block");
  assert.equal(shown[0], example);
});

Deno.test("the library example places a task on gpu-2 through the example fleet-placement plugin", async () => {
  // fleet-placement's place.sh runs `tyhooks pick-host`: tyhooks on PATH, as lib/README.md says.
  const bin = await makeTree({
    tyhooks: `#!/bin/sh\nexec '${Deno.execPath()}' run --quiet ${
      PERMISSION_FLAGS.join(" ")
    } '${MAIN}' "$@"\n`,
  });
  const r = await runExample(["plugins-example"], { PATH: `${bin}:${Deno.env.get("PATH")}` });
  assert.equal(r.exit_code, 0, r.stderr);
  assert.equal(
    r.stdout,
    "Task 42 runs on gpu-2 in ~/work\n" +
      "Why: most free memory: 39.0 GiB of 64.0 GiB (answered by fleet-placement)\n",
  );
});

Deno.test("the library example reads TY_PLUGINS_DIR when given no argument, and no handler means local", async () => {
  const empty = await tempDir({ prefix: "tyhooks-test-" });
  const r = await runExample([], { TY_PLUGINS_DIR: empty });
  assert.equal(r.exit_code, 0, r.stderr);
  assert.equal(r.stdout, "Task 42 runs locally: no placement handler named a host\n");
  assert.equal(r.stderr, "");
});

Deno.test("a script outside the checkout, with no deno.json, imports lib/mod.ts by path and asks a placement handler", async () => {
  const outside = await makeTree({
    "plugins/p/plugin.yaml": "name: p\nhooks:\n  task.placement: place.sh\n",
    "plugins/p/place.sh": '#!/bin/sh\necho \'{"target":"gpu-9","workdir":"/w","reason":"r"}\'\n',
    "place.ts": [
      `import * as ty from ${JSON.stringify(join(ROOT, "lib", "mod.ts"))};`,
      "const index = await ty.loadPlugins(Deno.args[0]);",
      "const placement = await new ty.Runner(index).resolvePlacement({ ...ty.EMPTY_TASK, id: 1 });",
      "console.log(JSON.stringify(placement));",
      "",
    ].join("\n"),
  });
  const r = await runScript(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSION_FLAGS, "place.ts", join(outside, "plugins")],
    cwd: outside,
    env: { NO_COLOR: "1", XDG_CACHE_HOME: join(outside, ".cache") },
    timeoutMs: 60_000,
  });
  assert.equal(r.exit_code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    target: "gpu-9",
    workdir: "/w",
    reason: "r",
    handler: "p",
  });
});
