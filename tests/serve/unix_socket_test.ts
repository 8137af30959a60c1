import assert from "node:assert/strict";
import { bindSocket, claimSocketPath, removeSocket } from "../../lib/serve/unix_socket.ts";
import { RunError } from "../../lib/errors.ts";

async function socketPath(): Promise<string> {
  return `${await Deno.makeTempDir({ prefix: "tyhooks-sock-" })}/t.sock`;
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
  const path = `${await Deno.makeTempDir()}/run/tyhooks/t.sock`;
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
