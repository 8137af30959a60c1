/**
 * The payload `hosts sync` sends (bundle, launcher, checksums), and `hosts sync` through a
 * stand-in ssh that runs the remote command on this machine, as the host's login shell would, in
 * a temp HOME: runs everywhere, sshd or not (sync_sshd_test.ts has the real server).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { launcherScript, preparePayload, sha256File } from "../../lib/hosts/payload.ts";
import { RUN_FLAGS } from "../../lib/process/detach.ts";
import { cli, PERMISSION_FLAGS, ROOT, shScript, START_FLAGS, tempDir, V8_FLAGS } from "../_cli.ts";
import { VERSION } from "../../lib/version.ts";

async function fakeHost() {
  const dir = await tempDir({ prefix: "tyhooks-fake-host-" });
  const ssh = join(dir, "ssh");
  await Deno.writeTextFile(
    ssh,
    shScript(
      "# Stand-in for ssh: the last argument is the remote command; run it here, in the host's env.",
      "for last; do :; done",
      'exec env HOME="$FAKE_HOME" PATH="$FAKE_PATH" sh -c "$last"',
      "",
    ),
    { mode: 0o755 },
  );
  const home = join(dir, "home");
  const local = join(dir, "local");
  await Deno.mkdir(home);
  await Deno.mkdir(join(local, "tmp"), { recursive: true });
  return {
    dir,
    home,
    env: (path: string) => ({
      TYHOOKS_SSH: ssh,
      FAKE_HOME: home,
      FAKE_PATH: path,
      HOME: local,
      XDG_CACHE_HOME: join(local, ".cache"),
      XDG_CONFIG_HOME: join(local, ".config"),
      TMPDIR: join(local, "tmp"),
    }),
  };
}

Deno.test("hosts sync warns when ~/.local/bin is not on the PATH ssh commands get, and still syncs", async () => {
  const host = await fakeHost();
  const r = await cli(["hosts", "sync", "box"], { env: host.env("/usr/bin:/bin") });
  assert.equal(r.code, 0, r.stderr);
  const [copied, facts] = r.stdout.trimEnd().split("\n");
  assert.match(copied, /^box: copied 3 files \(.*\): .*~\/\.local\/share\/tyhooks\/deno$/);
  assert.equal(JSON.parse(facts.slice("box: ".length)).version, "0.1.0");
  assert.equal(
    r.stderr,
    `tyhooks: warn: "~/.local/bin" is not on the PATH ssh commands get on "box", so pick-host's ` +
      `default probe ("tyhooks probe") will not find tyhooks there (hint: add it to PATH in a ` +
      `file the host's shell reads for ssh commands: ~/.bashrc above its interactive check, ` +
      "~/.zshenv)\n",
  );
  assert.ok((await Deno.stat(join(host.home, ".local", "bin", "tyhooks"))).isFile);
});

Deno.test("hosts sync warns when another tyhooks comes first on the host's PATH", async () => {
  const host = await fakeHost();
  const other = join(host.dir, "other");
  await Deno.mkdir(other);
  await Deno.writeTextFile(join(other, "tyhooks"), "#!/bin/sh\nexit 1\n", { mode: 0o755 });
  const path = `${other}:${host.home}/.local/bin:/usr/bin:/bin`;
  const r = await cli(["hosts", "sync", "box", "--json"], { env: host.env(path) });
  assert.equal(r.code, 0, r.stderr);
  const [outcome] = JSON.parse(r.stdout).hosts;
  assert.deepEqual(outcome.warnings, [
    `"tyhooks" on "box" is "${other}/tyhooks", which comes before ~/.local/bin on its PATH`,
  ]);
});

Deno.test("hosts sync says which host failed and why: a host without sha256sum or shasum", async () => {
  const host = await fakeHost();
  // A PATH with sh and nothing else.
  const bin = join(host.dir, "bin");
  await Deno.mkdir(bin);
  for (const tool of ["sh", "env", "uname", "head"]) {
    const found = ["/usr/bin", "/bin"].map((d) => join(d, tool)).find((p) => {
      try {
        return Deno.statSync(p).isFile;
      } catch {
        return false;
      }
    });
    if (found) await Deno.symlink(found, join(bin, tool));
  }
  const env = { ...host.env(bin), PATH: `${bin}:${Deno.env.get("PATH")}` };
  const r = await cli(["hosts", "sync", "box"], { env });
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    "box: failed: cannot inspect: neither sha256sum nor shasum is installed\n",
  );
});

Deno.test("hosts sync --plugins leaves big data files behind with a warning, and gathering counts against --timeout", async () => {
  const host = await fakeHost();
  const plugins = join(host.dir, "plugins");
  await Deno.mkdir(join(plugins, "p"), { recursive: true });
  await Deno.writeTextFile(
    join(plugins, "p", "plugin.yaml"),
    "name: p\nhooks:\n  task.done: s.sh\n",
  );
  await Deno.writeTextFile(join(plugins, "p", "s.sh"), "#!/bin/sh\n", { mode: 0o755 });
  // Sparse: 50 GiB on paper, nothing on disk. Hashing it took minutes and ignored SIGTERM.
  await Deno.writeFile(join(plugins, "p", "model.bin"), new Uint8Array());
  await Deno.truncate(join(plugins, "p", "model.bin"), 50 * 1024 ** 3);
  const env = host.env("/usr/bin:/bin");
  const r = await cli(["hosts", "sync", "box", "--plugins", "--plugins-dir", plugins], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stderr, /Plugin file not sent: p\/model\.bin: larger than 67108864 bytes/);
  assert.equal(
    await Deno.stat(join(host.home, ".config", "task", "plugins", "p", "model.bin")).catch(() =>
      null
    ),
    null,
  );
  // 60 MiB is sent, but hashing it (and building the bundle) cannot fit in 1 ms.
  await Deno.writeFile(join(plugins, "p", "data.bin"), new Uint8Array());
  await Deno.truncate(join(plugins, "p", "data.bin"), 60 * 1024 ** 2);
  const late = await cli(
    ["hosts", "sync", "box", "--plugins", "--plugins-dir", plugins, "--timeout", "1ms"],
    { env },
  );
  assert.equal(late.code, 1, late.stderr);
  assert.match(late.stderr, /Cannot gather what to send within --timeout 1 ms/);
});

Deno.test("the launcher runs the bundle with the grants and V8 flags of deno task compile, loaded as deno task cli loads it", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  assert.deepEqual(
    RUN_FLAGS,
    [
      ...Object.keys(config.permissions.tyhooks).map((name) => `--allow-${name}`),
      "--unstable-lazy-dynamic-imports",
      ...config.tasks.compile.command.match(/--v8-flags=\S+/g),
    ],
  );
  assert.deepEqual(RUN_FLAGS, [...PERMISSION_FLAGS, ...START_FLAGS, ...V8_FLAGS]);
  const exec = launcherScript().split("\n").find((line) => line.startsWith("exec "));
  assert.equal(
    exec,
    `exec "$deno" run --quiet --no-prompt --no-config ${RUN_FLAGS.join(" ")} ` +
      `"$share/tyhooks.js" "$@"`,
  );
});

Deno.test("preparePayload() from source bundles tyhooks; laid out as on a host, the launcher runs it with the Deno beside it", async () => {
  const payload = await preparePayload();
  const host = await tempDir({ prefix: "tyhooks-host-" });
  try {
    assert.equal(payload.kind, "bundle");
    assert.deepEqual(payload.tyhooks.map((f) => f.dest), ["share/tyhooks.js", "bin/tyhooks"]);
    const deno = await payload.deno!.file();
    assert.equal(deno.dest, "share/deno");
    assert.equal(payload.deno!.version, Deno.version.deno);
    for (const file of [...payload.tyhooks, deno]) {
      assert.equal(file.sha256, await sha256File(file.source));
      assert.equal(file.size, (await Deno.stat(file.source)).size);
      const where = file.dest.replace(/^bin\//, ".local/bin/").replace(
        /^share\//,
        ".local/share/tyhooks/",
      );
      await Deno.mkdir(join(host, where, ".."), { recursive: true });
      // The launcher finds the rest from its own real path: copy it, link the big ones.
      if (file.dest === "bin/tyhooks") await Deno.copyFile(file.source, join(host, where));
      else await Deno.symlink(file.source, join(host, where));
    }
    // A PATH without deno: the launcher must use the runtime beside the bundle.
    const out = await new Deno.Command(join(host, ".local", "bin", "tyhooks"), {
      args: ["--version"],
      env: { PATH: "/usr/bin:/bin", HOME: host },
      clearEnv: true,
      stdout: "piped",
      stderr: "piped",
    }).output();
    assert.equal(new TextDecoder().decode(out.stderr), "");
    assert.equal(new TextDecoder().decode(out.stdout), `tyhooks ${VERSION}\n`);
  } finally {
    // Not a tempDir: the payload's scratch dir is the library's to make.
    await Deno.remove(payload.scratch, { recursive: true });
  }
});

Deno.test("preparePayload() sends the plugins dir's files: .git skipped, symlinks followed, loops and odd names left out", async () => {
  const dir = await tempDir({ prefix: "tyhooks-plugins-" });
  const write = async (path: string, text: string) => {
    await Deno.mkdir(join(dir, path, ".."), { recursive: true });
    await Deno.writeTextFile(join(dir, path), text);
  };
  await write("a/plugin.yaml", "name: a\n");
  await write("a/.git/config", "[core]\n");
  await write("shared/lib.sh", "#!/bin/sh\n");
  await write("a/odd\nname.sh", "x");
  await Deno.symlink(join(dir, "shared"), join(dir, "a", "shared-link"));
  await Deno.symlink(dir, join(dir, "loop"));
  await Deno.symlink(join(dir, "missing"), join(dir, "broken"));
  const payload = await preparePayload({ pluginsDir: dir });
  await Deno.remove(payload.scratch, { recursive: true });
  assert.deepEqual(payload.plugins.map((f) => f.dest), [
    "plugins/a/plugin.yaml",
    "plugins/a/shared-link/lib.sh",
    "plugins/shared/lib.sh",
  ]);
  assert.deepEqual(payload.skipped, [
    `${JSON.stringify("a/odd\nname.sh")}: a newline or backslash in its name`,
    "broken: a broken symlink",
    "loop: a symlink loop",
  ]);
  const missing = await preparePayload({ pluginsDir: join(dir, "nonexistent") });
  await Deno.remove(missing.scratch, { recursive: true });
  assert.deepEqual(missing.plugins, []);
});

Deno.test("tyhooks hosts sync needs a host and a good --timeout, exit 64", async () => {
  const none = await cli(["hosts", "sync"]);
  assert.equal(none.code, 64);
  assert.match(none.stderr, /Missing argument for "hosts sync": expected HOST\.\.\./);
  const timeout = await cli(["hosts", "sync", "gpu-1", "--timeout", "soon"]);
  assert.equal(timeout.code, 64);
  assert.match(timeout.stderr, /Invalid duration "soon" for flag "--timeout"/);
  const blank = await cli(["hosts", "sync", "gpu 1"]);
  assert.equal(blank.code, 64);
  assert.match(blank.stderr, /Invalid host "gpu 1": expected an ssh destination/);
  const option = await cli(["hosts", "sync", "--", "-oProxyCommand=x"]);
  assert.equal(option.code, 64);
  assert.match(option.stderr, /Invalid host "-oProxyCommand=x": expected an ssh destination/);
  const escape = await cli(["hosts", "sync", "h\x1b[2Jx"]);
  assert.equal(escape.code, 64);
  assert.match(escape.stderr, /Invalid host "h\\u001b\[2Jx": expected an ssh destination/);
});

Deno.test("hosts sync escapes what a failing host's ssh printed: no escape sequence reaches the terminal", async () => {
  const host = await fakeHost();
  // An ssh that fails the way a hostile host could: a title and a screen clear on stderr.
  const ssh = join(host.dir, "hostile-ssh");
  await Deno.writeTextFile(
    ssh,
    shScript(
      "cat >/dev/null",
      'printf "remote\\033]0;PWN\\007 \\033[2J evil\\n" >&2',
      "exit 255",
      "",
    ),
    { mode: 0o755 },
  );
  const r = await cli(["hosts", "sync", "box"], {
    env: { ...host.env("/usr/bin:/bin"), TYHOOKS_SSH: ssh },
  });
  assert.equal(r.code, 1);
  assert.equal(
    r.stdout,
    "box: failed: cannot inspect: exited 255: remote\\x1b]0;PWN\\x07 \\x1b[2J evil\n",
  );
});
