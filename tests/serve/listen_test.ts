import assert from "node:assert/strict";
import { lchown } from "node:fs/promises";
import { join } from "node:path";
import {
  bearerCheck,
  bindSocket,
  checkExposure,
  claimSocketPath,
  formatListen,
  isLoopback,
  parseListen,
  readTokenFile,
  removeSocket,
} from "../../lib/serve/listen.ts";
import { InputError, RunError } from "../../lib/errors.ts";
import { NEEDS_ROOT, tempDir, valueIn, withTree } from "../_cli.ts";

Deno.test("parseListen() reads unix:PATH, HOST:PORT and [IPV6]:PORT", () => {
  assert.deepEqual(parseListen("unix:/run/t.sock"), { transport: "unix", path: "/run/t.sock" });
  assert.deepEqual(parseListen("127.0.0.1:7700"), {
    transport: "tcp",
    hostname: "127.0.0.1",
    port: 7700,
  });
  assert.deepEqual(parseListen("localhost:0"), {
    transport: "tcp",
    hostname: "localhost",
    port: 0,
  });
  assert.deepEqual(parseListen("[::1]:80"), { transport: "tcp", hostname: "::1", port: 80 });
});

Deno.test("parseListen() makes a relative socket path absolute", () => {
  assert.deepEqual(parseListen("unix:t.sock"), {
    transport: "unix",
    path: join(Deno.cwd(), "t.sock"),
  });
});

Deno.test("parseListen() defaults to tyhooks.sock in the runtime dir", async () => {
  // The runtime dir is read from the environment: set in a child's, not this shared process's.
  assert.deepEqual(
    await valueIn({ parseListen: "lib/serve/listen.ts" }, "parseListen(undefined)", {
      env: { XDG_RUNTIME_DIR: "/run/user/1234" },
    }),
    { transport: "unix", path: "/run/user/1234/tyhooks.sock" },
  );
});

Deno.test("parseListen() refuses a bad value, naming the flag and the value", () => {
  for (const bad of ["unix:", "7700", "host:", "host:99999", "::1:80", "a b:1"]) {
    assert.throws(() => parseListen(bad), (error: Error) => {
      assert.ok(error instanceof InputError);
      assert.equal(error.message, `Invalid value "${bad}" for flag "--listen"`);
      return true;
    });
  }
});

Deno.test("isLoopback() accepts only addresses no other host can reach", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "::ffff:127.0.0.1"]) {
    assert.ok(isLoopback(host), host);
  }
  for (const host of ["0.0.0.0", "::", "10.0.0.1", "192.168.1.5", "example.com", "128.0.0.1"]) {
    assert.ok(!isLoopback(host), host);
  }
});

Deno.test("formatListen() spells addresses as --listen does", () => {
  assert.equal(formatListen({ transport: "unix", path: "/t.sock" }), "unix:/t.sock");
  assert.equal(formatListen({ transport: "tcp", hostname: "::1", port: 1 }), "[::1]:1");
  assert.equal(formatListen({ transport: "tcp", hostname: "127.0.0.1", port: 2 }), "127.0.0.1:2");
});

Deno.test("readTokenFile() trims the token at both ends and refuses an empty file", async () => {
  await withTree({}, async (dir) => {
    const file = join(dir, "token");
    await Deno.writeTextFile(file, "  s3cret \n\n", { mode: 0o600 });
    assert.equal(await readTokenFile(file), "s3cret");
    await Deno.writeTextFile(file, " \n");
    await assert.rejects(readTokenFile(file), InputError);
    await assert.rejects(readTokenFile(`${file}.missing`), /Cannot read --token-file/);
  });
});

Deno.test("readTokenFile() refuses a token file group or others may read, naming its mode", async () => {
  await withTree({}, async (dir) => {
    const file = join(dir, "token");
    await Deno.writeTextFile(file, "s3cret\n");
    for (const mode of [0o644, 0o640, 0o604, 0o620]) {
      await Deno.chmod(file, mode);
      await assert.rejects(
        readTokenFile(file),
        (error: Error) =>
          error instanceof InputError &&
          error.message.includes(`mode 0${mode.toString(8)}`) &&
          error.hint === `hint: chmod 600 ${file}`,
      );
    }
    await Deno.chmod(file, 0o400);
    assert.equal(await readTokenFile(file), "s3cret");
  });
});

Deno.test(
  "readTokenFile() refuses a token file owned by another user (as root: chown nobody)",
  NEEDS_ROOT,
  async () => {
    await withTree({}, async (dir) => {
      const file = join(dir, "token");
      await Deno.writeTextFile(file, "s3cret\n", { mode: 0o600 });
      await Deno.chown(file, 65534, null);
      await assert.rejects(readTokenFile(file), /owned by user 65534, not by the current user 0/);
    });
  },
);

Deno.test(
  "readTokenFile() refuses a token file named through a symlink another user owns, file or dir, and follows the user's own (as root: lchown nobody)",
  NEEDS_ROOT,
  async () => {
    await withTree({}, async (dir) => {
      await Deno.mkdir(join(dir, "real"));
      await Deno.writeTextFile(join(dir, "real/token"), "s3cret\n", { mode: 0o600 });
      await Deno.symlink(join(dir, "real/token"), join(dir, "token"));
      await Deno.symlink("real", join(dir, "d"));
      for (const [path, link] of [["token", "token"], ["d/token", "d"]]) {
        await lchown(join(dir, link), 65534, 65534);
        await assert.rejects(readTokenFile(join(dir, path)), (error) => {
          assert.ok(error instanceof InputError);
          assert.equal(
            error.message,
            `Invalid --token-file "${join(dir, path)}": it is named through "${
              join(dir, link)
            }", a symlink owned by user 65534, not by the current user or root`,
          );
          assert.equal(error.hint, "hint: name the token file itself, or a link of your own");
          return true;
        });
        await lchown(join(dir, link), 0, 0);
        assert.equal(await readTokenFile(join(dir, path)), "s3cret");
      }
    });
  },
);

Deno.test("readTokenFile() refuses a FIFO and a file over 4 KiB instead of hanging or eating memory", async () => {
  await withTree({}, async (dir) => {
    const fifo = join(dir, "fifo");
    const mkfifo = await new Deno.Command("mkfifo", { args: ["-m", "600", fifo] }).output();
    assert.equal(mkfifo.code, 0);
    await assert.rejects(readTokenFile(fifo), /Invalid --token-file ".*fifo": not a regular file/);
    const big = join(dir, "big");
    await Deno.writeTextFile(big, "x".repeat(4097), { mode: 0o600 });
    await assert.rejects(readTokenFile(big), /Cannot read --token-file ".*big": larger than 4096/);
    await Deno.writeTextFile(big, "x".repeat(4096));
    assert.equal((await readTokenFile(big)).length, 4096);
  });
});

Deno.test("checkExposure() refuses a non-loopback address without a token", () => {
  assert.throws(
    () => checkExposure({ transport: "tcp", hostname: "0.0.0.0", port: 7700 }, undefined),
    (error: Error) =>
      error instanceof InputError && /"0\.0\.0\.0:7700".*--token-file/.test(error.message),
  );
  checkExposure({ transport: "tcp", hostname: "0.0.0.0", port: 7700 }, "t");
  checkExposure({ transport: "tcp", hostname: "127.0.0.1", port: 7700 }, undefined);
  checkExposure({ transport: "unix", path: "/t.sock" }, undefined);
});

Deno.test("bearerCheck() accepts exactly the token, and nothing else", async () => {
  const ok = bearerCheck("s3cret");
  const request = (authorization?: string) =>
    new Request("http://x/", { headers: authorization ? { authorization } : {} });
  assert.ok(await ok(request("Bearer s3cret")));
  assert.ok(await ok(request("bearer s3cret")));
  for (
    const bad of [undefined, "Bearer", "Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"]
  ) {
    assert.ok(!(await ok(request(bad))), String(bad));
  }
});

async function socketPath(): Promise<string> {
  return `${await tempDir({ prefix: "tyhooks-sock-" })}/t.sock`;
}

function listenAt(path: string): Deno.UnixListener {
  return Deno.listen({ transport: "unix", path });
}

Deno.test("bindSocket() leaves a socket of mode 0600 at the path, and nothing else", async () => {
  const path = await socketPath();
  await claimSocketPath(path);
  const { value: listener, identity } = await bindSocket(path, listenAt);
  try {
    const info = await Deno.lstat(path);
    assert.ok(info.isSocket);
    assert.equal(info.mode! & 0o777, 0o600);
    const names = [];
    for await (const entry of Deno.readDir(path.replace(/\/t\.sock$/, ""))) names.push(entry.name);
    assert.deepEqual(names, ["t.sock"]);
    // The renamed socket still reaches the listener.
    const accepted = listener.accept();
    const conn = await Deno.connect({ transport: "unix", path });
    (await accepted).close();
    conn.close();
  } finally {
    listener.close();
    assert.ok(await removeSocket(identity));
  }
  await assert.rejects(Deno.lstat(path), Deno.errors.NotFound);
});

Deno.test("claimSocketPath() creates a missing parent dir with mode 0700", async () => {
  const path = `${await tempDir()}/run/tyhooks/t.sock`;
  await claimSocketPath(path);
  assert.equal((await Deno.stat(path.replace(/\/t\.sock$/, ""))).mode! & 0o777, 0o700);
});

Deno.test("a stale socket from a dead daemon is replaced", async () => {
  const path = await socketPath();
  listenAt(path).close(); // The file stays, nobody listens: a crashed daemon's leftover.
  await claimSocketPath(path);
  const { value: listener, identity } = await bindSocket(path, listenAt);
  listener.close();
  await removeSocket(identity);
});

Deno.test("a live socket is refused with an error naming its path", async () => {
  const path = await socketPath();
  const live = listenAt(path);
  try {
    await assert.rejects(claimSocketPath(path), (error: Error) => {
      assert.ok(error instanceof RunError);
      assert.match(error.message, new RegExp(`Another daemon is listening on "${path}"`));
      return true;
    });
  } finally {
    live.close();
  }
});

Deno.test("claimSocketPath() never replaces a file that is not a socket", async () => {
  const path = await socketPath();
  await Deno.writeTextFile(path, "precious");
  await assert.rejects(claimSocketPath(path), /exists and is not a socket/);
  assert.equal(await Deno.readTextFile(path), "precious");
});

Deno.test("claimSocketPath() refuses a path too long for a unix socket", async () => {
  await assert.rejects(claimSocketPath(`/tmp/${"x".repeat(120)}.sock`), /Socket path too long/);
});

Deno.test("removeSocket() leaves alone a socket another daemon put in its place", async () => {
  const path = await socketPath();
  const first = await bindSocket(path, listenAt);
  first.value.close();
  const second = await bindSocket(path, listenAt);
  try {
    assert.equal(await removeSocket(first.identity), false);
    assert.ok((await Deno.lstat(path)).isSocket);
  } finally {
    second.value.close();
    await removeSocket(second.identity);
  }
});
