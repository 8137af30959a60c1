/**
 * tyhooks without the binary: `deno task cli` from wherever the user stands, and the command
 * `deno install -g` puts on PATH (README "Install"), from the checkout and from the
 * bundle, each run from an unrelated directory.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { exec, MAIN, PERMISSION_FLAGS, ROOT, tempDir, V8_FLAGS } from "../_cli.ts";
import { VERSION } from "../../lib/version.ts";

/** {@linkcode exec} in `cwd`, with this process's environment less INIT_CWD, plus `env`. */
function run(cmd: string[], options: { cwd: string; env: Record<string, string> }) {
  // npm (and so `npx deno`, as CI runs) exports INIT_CWD, which deno task then keeps instead of
  // naming where the task was started: the child must not inherit it.
  const inherited = Deno.env.toObject();
  delete inherited.INIT_CWD;
  const env = { ...inherited, NO_COLOR: "1", ...options.env };
  return exec(cmd, { cwd: options.cwd, clearEnv: true, env });
}

/**
 * A scratch dir outside the repository holding `plugins/` (one plugin, one broken one, so that
 * loading logs a warning) and `task.json`, with HOME and the XDG dirs inside it.
 */
async function withScratch(fn: (dir: string, env: Record<string, string>) => Promise<void>) {
  const dir = await tempDir({ prefix: "tyhooks-install-" });
  await Deno.mkdir(join(dir, "plugins", "greet"), { recursive: true });
  await Deno.mkdir(join(dir, "plugins", "broken"), { recursive: true });
  await Deno.writeTextFile(
    join(dir, "plugins", "greet", "plugin.yaml"),
    "name: greet\nhooks:\n  task.done: hi.sh\n",
  );
  await Deno.writeTextFile(
    join(dir, "plugins", "greet", "hi.sh"),
    '#!/bin/sh\necho "hi $TASK_ID"\n',
  );
  await Deno.chmod(join(dir, "plugins", "greet", "hi.sh"), 0o755);
  await Deno.writeTextFile(join(dir, "plugins", "broken", "plugin.yaml"), "name: [\n");
  await Deno.writeTextFile(join(dir, "task.json"), '{"id":5}');
  const env = {
    HOME: dir,
    XDG_CACHE_HOME: join(dir, ".cache"),
    XDG_CONFIG_HOME: join(dir, ".config"),
    TYHOOKS_NO_CACHE: "1",
  };
  await fn(dir, env);
}

// The relative paths below mean the scratch dir only if tyhooks resolves them where it was run.
const FIRE = [
  "fire",
  "task.done",
  "--task",
  "task.json",
  "--plugins-dir",
  "./plugins",
  "--show-output",
  "--log-format",
  "json",
];

function assertFired(r: { code: number; stdout: string; stderr: string }, stderrLines: string[]) {
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^==> plugin "greet": .*hi\.sh \(exit 0\) <==\n--- stdout:\nhi 5\n/);
  assert.ok(stderrLines.length > 0, "the broken plugin is warned about");
  for (const line of stderrLines) {
    assert.equal(typeof JSON.parse(line).msg, "string", line);
  }
}

Deno.test("deno task cli resolves relative paths where the user stands and prints no Deno warning", async () => {
  await withScratch(async (dir, env) => {
    const config = join(ROOT, "deno.json");
    const quiet = await run([Deno.execPath(), "task", "-q", "--config", config, "cli", ...FIRE], {
      cwd: dir,
      env,
    });
    // stderr is tyhooks' JSON lines and nothing else.
    assertFired(quiet, quiet.stderr.trim().split("\n"));
    // Without -q, deno task itself names the task it runs on its first stderr line; nothing of
    // Deno's follows (no "experimental" warning about the permission set).
    const plain = await run([Deno.execPath(), "task", "--config", config, "cli", ...FIRE], {
      cwd: dir,
      env,
    });
    const [banner, ...rest] = plain.stderr.trim().split("\n");
    assert.match(banner, /^Task cli /);
    assertFired(plain, rest);
    assert.doesNotMatch(plain.stderr, /Warning|experimental/);
  });
});

/** `deno install -g` of `entry` (as README gives it) into `dir`; returns the installed command. */
async function installGlobal(
  dir: string,
  env: Record<string, string>,
  entry: string[],
): Promise<string> {
  const root = join(dir, "install-root");
  const install = await run([
    Deno.execPath(),
    ...["install", "-g", "-f", "-q", "--root", root, "-n", "tyhooks"],
    ...PERMISSION_FLAGS,
    ...V8_FLAGS,
    ...entry,
  ], { cwd: dir, env });
  assert.equal(install.code, 0, install.stderr);
  return join(root, "bin", "tyhooks");
}

Deno.test("deno install -g from the checkout puts a tyhooks command that works from any directory", async () => {
  await withScratch(async (dir, env) => {
    const tyhooks = await installGlobal(dir, env, ["--config", join(ROOT, "deno.json"), MAIN]);
    assert.equal((await run([tyhooks, "-V"], { cwd: dir, env })).stdout, `tyhooks ${VERSION}\n`);
    const r = await run([tyhooks, ...FIRE], { cwd: dir, env });
    assertFired(r, r.stderr.trim().split("\n"));
  });
});

Deno.test("deno install -g of the bundle puts a tyhooks command that works from any directory", async () => {
  await withScratch(async (dir, env) => {
    // What `deno task bundle` runs, written to the scratch dir instead of dist/.
    const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
    const bundleArgs = (config.tasks.bundle.command as string).split(" ").slice(1)
      .map((arg) => arg === "dist/tyhooks.js" ? join(dir, "tyhooks.js") : arg)
      .map((arg) => arg === "main.ts" ? MAIN : arg);
    const built = await run([Deno.execPath(), ...bundleArgs], { cwd: ROOT, env });
    assert.equal(built.code, 0, built.stderr);
    const tyhooks = await installGlobal(dir, env, [join(dir, "tyhooks.js")]);
    const r = await run([tyhooks, ...FIRE], { cwd: dir, env });
    assertFired(r, r.stderr.trim().split("\n"));
  });
});
