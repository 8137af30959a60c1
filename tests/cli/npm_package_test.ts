/**
 * The npm package (README "Install"): `deno task npm` builds it, `npm pack` packs it, and
 * `npm install -g --prefix` puts it in a temp prefix, from npm's cache when it holds the package
 * `deno` (CI's `npx deno@...` leaves it there). The `tyhooks` it installs then runs as on a
 * machine with only Node.js and npm: no `deno` on PATH, a fresh HOME, and, where this machine lets
 * a test (root, `unshare`), no network and a read-only HOME.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import {
  type CliResult,
  exec,
  PERMISSION_FLAGS,
  ROOT,
  tempDir,
  V8_FLAGS,
  writeTree,
} from "../_cli.ts";
import { installNpmPackage, npm, NPM_VERSION as VERSION, type NpmPackage } from "../_npm.ts";
import { settled } from "../_index.ts";

const decoder = new TextDecoder();
const EXAMPLES = join(ROOT, "plugins-example");

/** Why npm cannot be used here, or undefined. */
function npmMissing(): string | undefined {
  try {
    const out = new Deno.Command("npm", { args: ["--version"], stdout: "null", stderr: "null" })
      .outputSync();
    return out.success ? undefined : "npm --version failed";
  } catch (error) {
    return `no npm: ${(error as Error).message}`;
  }
}

/**
 * Why the runs cannot be cut off the network and given a read-only HOME (`unshare -mn`, then a
 * read-only bind mount: root only), or undefined when they can.
 */
function unshareMissing(): string | undefined {
  const dir = Deno.makeTempDirSync({ prefix: "tyhooks-unshare-" });
  try {
    const out = new Deno.Command("unshare", {
      args: ["-mn", "sh", "-c", 'mount --bind -o ro "$0" "$0"', dir],
      stdout: "null",
      stderr: "piped",
    }).outputSync();
    return out.success ? undefined : decoder.decode(out.stderr).trim() || `exit ${out.code}`;
  } catch (error) {
    return (error as Error).message;
  } finally {
    Deno.removeSync(dir);
  }
}

const NO_NPM = npmMissing();
const NO_UNSHARE = NO_NPM ? undefined : unshareMissing();
const CUT_OFF = NO_UNSHARE === undefined
  ? "with the network cut"
  : `(network not cut, HOME not read-only: unshare -mn cannot run here: ${NO_UNSHARE})`;

/** `cmd` as the runs below make it: no network, and HOME read-only when asked, where possible. */
function offline(cmd: string[], { readOnlyHome = false } = {}): string[] {
  if (NO_UNSHARE !== undefined) return cmd;
  return readOnlyHome
    ? [
      "unshare",
      "-mn",
      "sh",
      "-c",
      'mount --bind -o ro "$HOME" "$HOME" && exec "$@"',
      "sh",
      ...cmd,
    ]
    : ["unshare", "-n", ...cmd];
}

let installing: Promise<NpmPackage> | undefined;

/** Builds, packs and installs the package once for the whole file. */
async function installed(): Promise<NpmPackage> {
  return await (installing ??= tempDir({ prefix: "tyhooks-npm-" }).then(installNpmPackage));
}

/** A machine with only Node.js and npm: the prefix's bin and the system's, a HOME of its own. */
async function machine(prefix: string): Promise<Record<string, string>> {
  return { PATH: `${join(prefix, "bin")}:/usr/bin:/bin`, HOME: await tempDir() };
}

/** Runs `tyhooks ...args` (or a `sh -c` line) as installed, off the network. */
function tyhooks(
  env: Record<string, string>,
  args: string[],
  options: { readOnlyHome?: boolean; stdin?: string } = {},
): Promise<CliResult> {
  return exec(offline(["tyhooks", ...args], options), {
    env,
    clearEnv: true,
    cwd: env.HOME,
    stdin: options.stdin,
  });
}

function shell(env: Record<string, string>, line: string): Promise<CliResult> {
  return exec(offline(["sh", "-c", line]), { env, clearEnv: true, cwd: env.HOME });
}

const ignore = NO_NPM !== undefined;
const skipped = NO_NPM === undefined ? "" : ` (skipped: ${NO_NPM})`;

Deno.test({
  name: `npm install -g of the package puts a tyhooks on PATH that runs without deno on PATH and ` +
    `with a read-only HOME ${CUT_OFF}, printing nothing on stderr${skipped}`,
  ignore,
  fn: async () => {
    const { prefix } = await installed();
    const env = await machine(prefix);
    // Controls: deno is not on this PATH, and the sandbox has no network but loopback.
    assert.notEqual((await shell(env, "command -v deno")).code, 0);
    if (NO_UNSHARE === undefined) {
      const ifaces = (await shell(env, "tail -n +3 /proc/net/dev")).stdout.trim().split("\n");
      assert.deepEqual(ifaces.map((line) => line.trim().split(":")[0]), ["lo"]);
    }
    const version = await tyhooks(env, ["--version"], { readOnlyHome: true });
    assert.deepEqual(version, { code: 0, stdout: `tyhooks ${VERSION}\n`, stderr: "" });
    const list = await tyhooks(env, ["plugins", "list", "--plugins-dir", EXAMPLES], {
      readOnlyHome: true,
    });
    assert.equal(list.stderr, "");
    assert.equal(list.code, 0);
    assert.match(list.stdout, /^Plugins in ".*plugins-example":\n/);
    assert.match(list.stdout, /\n {2}tool-guard \(/);
    // yaml and zod, loaded from their chunks.
    const validate = await tyhooks(env, ["plugins", "validate", EXAMPLES], { readOnlyHome: true });
    assert.deepEqual(
      [validate.code, validate.stderr],
      [0, ""],
      validate.stdout + validate.stderr,
    );
    assert.match(validate.stdout, /^ok: \d+ plugins in /);
    if (NO_UNSHARE === undefined) {
      assert.deepEqual([...Deno.readDirSync(env.HOME)], [], "nothing written to HOME");
    }
  },
});

Deno.test({
  name: `the npm-installed tyhooks guards Claude Code's tool calls with an RE2 tools matcher ` +
    `${CUT_OFF}${skipped}`,
  ignore,
  fn: async () => {
    const { prefix } = await installed();
    const env = await machine(prefix);
    const plugins = await tempDir();
    // A matcher beyond plain names needs the RE2 engine (npm:re2js), a chunk of its own.
    await writeTree(plugins, {
      "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n" +
        'tyhooks:\n  pre_tool_call: {tools: "^Ba.h$"}\n',
      "g/guard.sh": '#!/bin/sh\necho \'{"action":"block","reason":"no shell today"}\'\n',
    });
    const call = (tool: string) =>
      tyhooks(env, ["tool", "pre", "--claude", "--plugins-dir", plugins], {
        readOnlyHome: true,
        stdin: JSON.stringify({
          session_id: "s",
          hook_event_name: "PreToolUse",
          tool_name: tool,
          tool_input: { command: "ls" },
          cwd: plugins,
        }),
      });
    const bash = await call("Bash");
    assert.equal(bash.code, 2, bash.stderr);
    assert.match(bash.stderr, /no shell today/);
    assert.deepEqual(await call("Write"), { code: 0, stdout: "", stderr: "" });
  },
});

Deno.test({
  name: `agent install from the npm-installed tyhooks names the tyhooks on PATH, which runs it ` +
    `again ${CUT_OFF}${skipped}`,
  ignore,
  fn: async () => {
    const { prefix } = await installed();
    const env = await machine(prefix);
    const r = await tyhooks(env, ["agent", "install", "claude", "--dry-run"]);
    assert.equal(r.code, 0, r.stderr);
    const settings = JSON.parse(r.stdout);
    const command: string = settings.hooks.PostToolUse[0].hooks[0].command;
    const launcher = join(prefix, "bin", "tyhooks");
    assert.equal(command, `${launcher} agent claude`);
    const version = await shell(env, `${launcher} --version`);
    assert.deepEqual(version, { code: 0, stdout: `tyhooks ${VERSION}\n`, stderr: "" });
  },
});

/** The shell blocks of README's "A first plugin in five minutes", in order. */
async function fiveMinutePlugin(): Promise<string[]> {
  const readme = await Deno.readTextFile(join(ROOT, "README.md"));
  const section = readme.split("\n## A first plugin in five minutes\n")[1].split("\n## ")[0];
  return [...section.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]);
}

Deno.test({
  name: `README's first plugin in five minutes works with the npm-installed tyhooks ${CUT_OFF}` +
    skipped,
  ignore,
  fn: async () => {
    const { prefix } = await installed();
    const env = await machine(prefix);
    const [create, hook, commands, ...rest] = await fiveMinutePlugin();
    assert.equal(rest.length, 0);
    const lines = (block: string) => block.split("\n").filter((l) => l.trim() !== "");
    for (const line of lines(create)) {
      const r = await shell(env, line);
      assert.deepEqual([r.code, r.stderr], [0, ""], `${line}: ${r.stderr}`);
    }
    // The hook's block is the file it names in its second line.
    const where = hook.split("\n")[1].match(/^# (hello\/\S+):/)![1];
    const dir = join(env.HOME, ".config", "task", "plugins");
    await Deno.writeTextFile(join(dir, where), hook);
    const outputs = [];
    for (const line of lines(commands)) {
      const r = await shell(env, line);
      // Only the one-line summaries a command gives at info level (fire's).
      const logged = r.stderr.replace(/^tyhooks: info: .*\n/gm, "");
      assert.deepEqual([r.code, logged], [0, ""], `${line}: ${r.stdout}${r.stderr}`);
      outputs.push(r.stdout);
    }
    const [validate, fire, run, list] = outputs;
    assert.match(validate, /^ok: 1 plugin in ".*\/hello"\n$/);
    assert.match(
      fire,
      /^==> plugin "hello": .*task\.done\.sh \(exit 0\) <==\n--- stdout:\nlogged task 7\n/,
    );
    assert.match(run, /7/);
    assert.match(list, /\n {2}hello \(/);
    assert.equal(
      await Deno.readTextFile(join(dir, "hello", "done.log")),
      "task.done: task 7 Write docs\n",
    );
  },
});

Deno.test({
  name: `a project's npm install without install scripts runs node_modules/.bin/tyhooks on the ` +
    `Deno of the hoisted platform package ${CUT_OFF}${skipped}`,
  ignore,
  fn: async () => {
    const { tgz, npmEnv } = await installed();
    const project = await tempDir();
    await npm([
      ...["install", "--prefix", project, "--ignore-scripts"],
      ...["--prefer-offline", "--no-audit", "--no-fund", tgz],
    ], npmEnv);
    const modules = join(project, "node_modules");
    // Control: the deno package's install script, which links its binary beside it, did not run.
    await assert.rejects(Deno.stat(join(modules, "deno", "deno")), Deno.errors.NotFound);
    assert.ok((await Deno.stat(join(modules, "tyhooks"))).isDirectory, "tyhooks is hoisted");
    const r = await exec(offline([join(modules, ".bin", "tyhooks"), "--version"]), {
      env: { PATH: "/usr/bin:/bin", HOME: await tempDir() },
      clearEnv: true,
    });
    assert.deepEqual(r, { code: 0, stdout: `tyhooks ${VERSION}\n`, stderr: "" });
  },
});

Deno.test({
  name: `without its deno dependency the launcher says so, and a --claude guard blocks${skipped}`,
  ignore,
  fn: async () => {
    const { pkg } = await installed();
    const launcher = join(pkg, "bin", "tyhooks");
    const env = { PATH: "/usr/bin:/bin", HOME: await tempDir() };
    const plain = await exec([launcher, "--version"], { env, clearEnv: true });
    assert.equal(plain.code, 1);
    assert.match(
      plain.stderr,
      /^tyhooks: Cannot find the Deno binary of the npm package "deno" [\d.]+ from ".*"\nhint: /,
    );
    const guard = await exec([launcher, "tool", "pre", "--claude"], { env, clearEnv: true });
    assert.equal(guard.code, 2, "fails closed");
    const allowed = await exec([launcher, "tool", "pre", "--claude", "--on-failure", "allow"], {
      env,
      clearEnv: true,
    });
    assert.equal(allowed.code, 1);
  },
});

Deno.test({
  name:
    `hosts sync from the npm-installed tyhooks sends the whole bundle, which runs on the host ` +
    `${CUT_OFF}${skipped}`,
  ignore,
  fn: async () => {
    const { prefix } = await installed();
    const env = await machine(prefix);
    const host = await tempDir({ prefix: "tyhooks-fake-host-" });
    // Stand-in for ssh: the last argument is the remote command, run here in the host's HOME.
    await writeTree(host, {
      ssh:
        '#!/bin/sh\nfor last; do :; done\nexec env HOME="$FAKE_HOME" PATH="$FAKE_PATH" sh -c "$last"\n',
    });
    await Deno.mkdir(join(host, "home"));
    const sync = await tyhooks({
      ...env,
      TYHOOKS_SSH: join(host, "ssh"),
      FAKE_HOME: join(host, "home"),
      FAKE_PATH: `${join(host, "home", ".local", "bin")}:/usr/bin:/bin`,
    }, ["hosts", "sync", "box"]);
    assert.equal(sync.code, 0, sync.stderr);
    assert.match(sync.stdout, /^box: copied 3 files /);
    const there = await exec([join(host, "home", ".local", "bin", "tyhooks"), "--version"], {
      env: { PATH: "/usr/bin:/bin", HOME: join(host, "home") },
      clearEnv: true,
    });
    assert.deepEqual(there, { code: 0, stdout: `tyhooks ${VERSION}\n`, stderr: "" });
  },
});

Deno.test({
  name: `a warm route of the npm-installed tyhooks loads neither zod, yaml, re2js nor Node's ` +
    `compatibility layer${skipped}`,
  ignore,
  fn: async () => {
    const { prefix } = await installed();
    const pkg = join(prefix, "lib", "node_modules", "tyhooks");
    // The launcher's own line, with Deno's debug log (it names each module it runs) for --quiet.
    const line = (await Deno.readTextFile(join(pkg, "bin", "tyhooks"))).split("\n")
      .find((l) => l.startsWith('exec "$deno" run '))!;
    const flags = line.split(" ").slice(3, -2).map((f) =>
      f === "--quiet" ? "--log-level=debug" : f
    );
    assert.ok(flags.includes("--no-config"), line);
    assert.deepEqual(flags.filter((f) => /^--(allow|v8)/.test(f)), [
      ...PERMISSION_FLAGS,
      ...V8_FLAGS,
    ]);
    const plugins = await tempDir();
    await writeTree(plugins, {
      "r/plugin.yaml": "name: r\nhooks:\n  task.route: route.sh\n",
      "r/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/profiles/a\n",
    });
    await settled();
    const env = { HOME: await tempDir() };
    const cmd = [
      join(pkg, "node_modules", "deno", "deno"),
      "run",
      ...flags,
      join(pkg, "lib", "main.js"),
      ...["route", "--plugins-dir", plugins, "--task-json", '{"id":1}'],
    ];
    // Twice first: the index cache is written, then every module is in Deno's code cache.
    for (let i = 0; i < 3; i++) {
      const r = await exec(cmd, { env, clearEnv: true });
      assert.equal(r.code, 0, r.stderr.slice(-2000));
      assert.match(r.stdout, /^PLUGIN=r\n/);
      if (i < 2) continue;
      const loaded = [...r.stderr.matchAll(/code cache (?:hit )?for ES module: ([^,\s]+)/g)]
        .map((m) => m[1]);
      const own = loaded.filter((s) => s.startsWith("file:"));
      assert.ok(own.some((s) => s.endsWith("/lib/main.js")), loaded.join("\n"));
      assert.deepEqual(loaded.filter((s) => s.startsWith("ext:deno_node/")), []);
      // esbuild names each module's source above its code: the npm packages' paths.
      for (const chunk of own) {
        const code = await Deno.readTextFile(new URL(chunk));
        assert.doesNotMatch(code, /registry\.npmjs\.org\/(zod|yaml|re2js)\//, chunk);
      }
    }
  },
});
