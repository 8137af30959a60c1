import assert from "node:assert/strict";
import { join } from "node:path";
import { launcherScript, preparePayload, RUN_FLAGS, sha256File } from "../../lib/hosts/payload.ts";
import { cli, PERMISSION_FLAGS, ROOT, tempDir, V8_FLAGS } from "../_cli.ts";
import { VERSION } from "../../lib/version.ts";

Deno.test("the launcher runs the bundle with the grants and V8 flags of deno task compile", async () => {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  assert.deepEqual(
    RUN_FLAGS,
    [
      ...Object.keys(config.permissions.tyhooks).map((name) => `--allow-${name}`),
      ...config.tasks.compile.command.match(/--v8-flags=\S+/g),
    ],
  );
  assert.deepEqual(RUN_FLAGS, [...PERMISSION_FLAGS, ...V8_FLAGS]);
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
    await Deno.remove(payload.scratch, { recursive: true });
    await Deno.remove(host, { recursive: true });
  }
});

Deno.test("preparePayload() sends the plugins dir's files: .git skipped, symlinks followed, loops and odd names left out", async () => {
  const dir = await tempDir({ prefix: "tyhooks-plugins-" });
  try {
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
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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
});
