/**
 * The shipped builds: the single-file bundle (always) and the compiled binary (when Deno's
 * runtime base can be had: DENORT_BIN set, or its download works). Each answers --version,
 * route and place against plugins-example/, with `tyhooks` on PATH being the build itself.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { exec, MAIN, PERMISSION_FLAGS, ROOT, tempDir, V8_FLAGS } from "../_cli.ts";
import { VERSION } from "../../lib/version.ts";
import { assertPlaced } from "./_trees.ts";

const EXAMPLES = join(ROOT, "plugins-example");
const TASK = '{"id": 9, "title": "t", "project": "work-web"}';

/** Puts `tyhooks` (running `command`) on PATH and checks the three answers. */
async function checkBuild(command: string[]) {
  const bin = await tempDir();
  await Deno.writeTextFile(
    join(bin, "tyhooks"),
    `#!/bin/sh\nexec ${command.map((a) => `'${a}'`).join(" ")} "$@"\n`,
  );
  await Deno.chmod(join(bin, "tyhooks"), 0o755);
  const env = {
    PATH: `${bin}:${Deno.env.get("PATH")}`,
    TY_PLUGINS_DIR: EXAMPLES,
    XDG_CACHE_HOME: await tempDir(),
    QUOTA_FILE: join(bin, "no-quota"),
  };
  const tyhooks = join(bin, "tyhooks");
  const version = await exec([tyhooks, "--version"], { env });
  assert.equal(version.stdout, `tyhooks ${VERSION}\n`);
  const route = await exec([tyhooks, "route", "--task-json", TASK], { env });
  assert.equal(route.code, 0, route.stderr);
  assert.match(route.stdout, /^PLUGIN=quota-router\nCLAUDE_CONFIG_DIR=.*\.claude-work\n/);
  const place = await exec([tyhooks, "place", "--task-json", TASK], { env });
  assertPlaced(place, {
    target: "gpu-2",
    workdir: "~/work",
    reason: "most free memory: 39.0 GiB of 64.0 GiB",
    handler: "fleet-placement",
  });
}

Deno.test("deno task cli runs with the V8 flags the binary is built with", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  // The daemon's memory stays flat under load only with these (lib/README.md "Daemon").
  assert.deepEqual(V8_FLAGS, ["--v8-flags=--optimize-for-size,--no-opt,--no-lazy"]);
  assert.deepEqual(config.tasks.cli.command.match(/--v8-flags=\S+/g), V8_FLAGS);
});

Deno.test("every deno task that runs with the config's permission set is quiet, so Deno's experimental-feature warning stays off stderr", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const granted = Object.entries(config.tasks as Record<string, { command: string }>)
    .filter(([, task]) => /deno run (-\S+ )*-P=/.test(task.command));
  assert.ok(granted.length >= 2, "deno task cli and deno task demo at least");
  for (const [name, task] of granted) {
    assert.match(task.command, /deno run (-\S+ )*(-q|--quiet) /, `deno task ${name}`);
  }
});

Deno.test("deno task bundle builds one file that answers --version, route and place", async () => {
  const out = join(await tempDir(), "tyhooks.js");
  const built = await exec([
    Deno.execPath(),
    "bundle",
    "--platform",
    "deno",
    "--output",
    out,
    MAIN,
  ]);
  assert.equal(built.code, 0, built.stderr);
  await checkBuild([Deno.execPath(), "run", "--quiet", ...PERMISSION_FLAGS, ...V8_FLAGS, out]);
});

// deno compile needs its runtime base (denort), downloaded from Deno's site unless DENORT_BIN
// points at one. Where neither works, the check of the binary is reported as an ignored step,
// with the reason: never a fake binary. Any other compile failure fails the test.
Deno.test("deno task compile builds a binary that answers --version, route and place", async (t) => {
  const dir = await tempDir({ prefix: "tyhooks-compile-" });
  const binary = join(dir, "tyhooks");
  const compiled = await exec([
    Deno.execPath(),
    "compile",
    "-P=tyhooks",
    ...V8_FLAGS,
    "--output",
    binary,
    MAIN,
  ]);
  const noBase = compiled.code !== 0 && compiled.stderr.includes("Setting up base binary");
  if (compiled.code !== 0 && !noBase) assert.fail(compiled.stderr);
  // The last "N: ..." line before the backtrace is the root cause (e.g. the DNS failure).
  const cause = compiled.stderr.split("Stack backtrace")[0].split("\n").map((l) => l.trim())
    .filter((l) => /^\d+: /.test(l)).at(-1)?.replace(/^\d+: /, "");
  await t.step({
    name: noBase
      ? `the binary (skipped: deno compile could not get its runtime base: ${cause}; set DENORT_BIN)`
      : "the binary answers --version, route and place",
    ignore: noBase,
    fn: () => checkBuild([binary]),
  });
});

/**
 * `deno task compile`'s command, run from the repository with the binary written under `out`
 * instead of dist/.
 */
async function compileTask(out: string, env: Record<string, string>, wrap: string[] = []) {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const [deno, ...args] = (config.tasks.compile.command as string).split(" ");
  assert.equal(deno, "deno");
  const cmd = [...wrap, Deno.execPath(), ...args.map((a) => a === "dist/tyhooks" ? out : a)];
  return await exec(cmd, { cwd: ROOT, env: { NO_COLOR: "1", ...env } });
}

Deno.test("deno task compile with DENORT_BIN naming a missing file says so in one line and leaves no output dir", async () => {
  const dir = await tempDir();
  const r = await compileTask(join(dir, "dist", "tyhooks"), {
    DENORT_BIN: join(dir, "no-denort"),
  });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^deno task compile: Cannot get the runtime base of deno compile \(denort [\d.]+\): DENORT_BIN names ".*no-denort", which is missing \(hint: [^\n]*\)\n$/,
  );
  assert.deepEqual([...Deno.readDirSync(dir)], []);
});

const noNetns = (() => {
  try {
    const out = new Deno.Command("unshare", { args: ["-n", "true"], stderr: "piped" }).outputSync();
    return out.success ? undefined : new TextDecoder().decode(out.stderr).trim();
  } catch (error) {
    return (error as Error).message;
  }
})();

Deno.test({
  name: noNetns === undefined
    ? "deno task compile offline, with no runtime base cached, says so in one line and leaves no output dir"
    : `deno task compile offline (skipped: unshare -n cannot cut the network here: ${noNetns})`,
  ignore: noNetns !== undefined,
  fn: async () => {
    const dir = await tempDir();
    // Deno's cache of its own, without a denort in it; the task's script needs no other module.
    const r = await compileTask(join(dir, "dist", "tyhooks"), {
      DENO_DIR: join(dir, "deno-dir"),
    }, ["unshare", "-n"]);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^deno task compile: Cannot get the runtime base of deno compile \(denort [\d.]+\): "https:\/\/dl\.deno\.land\/release\/v[\d.]+\/denort-[\w-]+\.zip" cannot be reached \([^\n]+\) \(hint: set DENORT_BIN [^\n]*\)\n$/,
    );
    assert.ok(!(await Deno.stat(join(dir, "dist")).catch(() => null)), "no dist/ left");
  },
});
