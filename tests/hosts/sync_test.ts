/**
 * `hosts sync` through a stand-in ssh that runs the remote command on this machine, as the host's
 * login shell would, in a temp HOME: runs everywhere, sshd or not (sync_sshd_test.ts has the real
 * server).
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, tempDir } from "../_cli.ts";

async function fakeHost() {
  const dir = await tempDir({ prefix: "tyhooks-fake-host-" });
  const ssh = join(dir, "ssh");
  await Deno.writeTextFile(
    ssh,
    [
      "#!/bin/sh",
      "# Stand-in for ssh: the last argument is the remote command; run it here, in the host's env.",
      "for last; do :; done",
      'exec env HOME="$FAKE_HOME" PATH="$FAKE_PATH" sh -c "$last"',
      "",
    ].join("\n"),
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
  try {
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
  } finally {
    await Deno.remove(host.dir, { recursive: true });
  }
});

Deno.test("hosts sync warns when another tyhooks comes first on the host's PATH", async () => {
  const host = await fakeHost();
  try {
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
  } finally {
    await Deno.remove(host.dir, { recursive: true });
  }
});

Deno.test("hosts sync says which host failed and why: a host without sha256sum or shasum", async () => {
  const host = await fakeHost();
  try {
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
  } finally {
    await Deno.remove(host.dir, { recursive: true });
  }
});

Deno.test("hosts sync --plugins leaves big data files behind with a warning, and gathering counts against --timeout (review)", async () => {
  const host = await fakeHost();
  const plugins = join(host.dir, "plugins");
  try {
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
  } finally {
    await Deno.remove(host.dir, { recursive: true });
  }
});
