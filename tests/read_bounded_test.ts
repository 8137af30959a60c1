/** The one bounded reader: special files are refused before they are opened, reads are capped. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { BoundedReadError, INPUT_CAPS, readBounded, readOpenFile } from "../lib/fs.ts";
import { readTokenFile } from "../lib/serve/listen.ts";
import { readHostsFile } from "../lib/hosts/hosts_file.ts";
import { cli, tempDir } from "./_cli.ts";

async function withDir(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = await tempDir({ prefix: "tyhooks-read-" });
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

async function mkfifo(path: string): Promise<void> {
  const made = await new Deno.Command("mkfifo", { args: [path] }).output();
  assert.ok(made.success);
}

Deno.test("readBounded() refuses a FIFO, a socket and a device by name, without opening them", async () => {
  await withDir(async (dir) => {
    await mkfifo(join(dir, "fifo"));
    // A FIFO with no writer blocks open() forever: refusing it must not open it.
    await assert.rejects(readBounded(join(dir, "fifo")), (error) => {
      assert.ok(error instanceof BoundedReadError);
      assert.equal(error.message, "not a regular file (a FIFO)");
      return true;
    });
    const listener = Deno.listen({ transport: "unix", path: join(dir, "sock") });
    try {
      await assert.rejects(readBounded(join(dir, "sock")), /not a regular file \(a socket\)/);
    } finally {
      listener.close();
    }
    await assert.rejects(readBounded("/dev/zero"), /not a regular file \(a character device\)/);
    await assert.rejects(readBounded(dir), /not a regular file \(a directory\)/);
  });
});

Deno.test("a FIFO put in place after the stat is opened without waiting, and refused", async () => {
  // What readBounded() opens once its stat found a regular file: another user who can write the
  // dir may have swapped a FIFO in since, which would hang tool pre, deaf to SIGTERM.
  await withDir(async (dir) => {
    await mkfifo(join(dir, "fifo"));
    await assert.rejects(readOpenFile(join(dir, "fifo"), 1024), (error) => {
      assert.ok(error instanceof BoundedReadError);
      assert.equal(error.message, "not a regular file (a FIFO)");
      return true;
    });
    await Deno.writeTextFile(join(dir, "file"), "name: a\n");
    assert.equal(
      new TextDecoder().decode(await readOpenFile(join(dir, "file"), 1024)),
      "name: a\n",
    );
    await assert.rejects(readOpenFile(join(dir, "file"), 4), /larger than 4 bytes/);
  });
});

Deno.test("readBounded() follows a symlink to a regular file and caps what it reads", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "task.json"), '{"id":1}');
    await Deno.symlink("task.json", join(dir, "link.json"));
    assert.equal(await readBounded(join(dir, "link.json")), '{"id":1}');
    await assert.rejects(
      readBounded(join(dir, "task.json"), { maxBytes: 4 }),
      /larger than 4 bytes/,
    );
  });
});

Deno.test("the token file is capped at 4 KiB and a FIFO there is refused", async () => {
  await withDir(async (dir) => {
    await Deno.writeTextFile(join(dir, "token"), "x".repeat(INPUT_CAPS.token + 1));
    await Deno.chmod(join(dir, "token"), 0o600);
    await assert.rejects(readTokenFile(join(dir, "token")), /larger than 4096 bytes/);
    await mkfifo(join(dir, "fifo"));
    await assert.rejects(readTokenFile(join(dir, "fifo")), /not a regular file/);
  });
});

Deno.test("a hosts file that is a FIFO is an error naming it, not a hang", async () => {
  await withDir(async (dir) => {
    await mkfifo(join(dir, "hosts"));
    await assert.rejects(
      readHostsFile(join(dir, "hosts")),
      /Cannot read hosts file ".*hosts": not a regular file \(a FIFO\)/,
    );
  });
});

Deno.test("--task naming a FIFO or a device is a usage error naming it, and a big file is capped", async () => {
  await withDir(async (dir) => {
    await mkfifo(join(dir, "task"));
    const fifo = await cli(["fire", "x", "--task", join(dir, "task"), "--plugins-dir", dir]);
    assert.equal(fifo.code, 64);
    assert.match(fifo.stderr, /Cannot read --task ".*task": not a regular file \(a FIFO\)/);
    const zero = await cli(["fire", "x", "--task", "/dev/zero", "--plugins-dir", dir]);
    assert.equal(zero.code, 64);
    assert.match(zero.stderr, /Cannot read --task "\/dev\/zero": not a regular file/);
    await Deno.writeTextFile(join(dir, "big.json"), " ".repeat(INPUT_CAPS.task + 1));
    const big = await cli(["fire", "x", "--task", join(dir, "big.json"), "--plugins-dir", dir]);
    assert.equal(big.code, 64);
    assert.match(big.stderr, /larger than 1048576 bytes/);
  });
});
