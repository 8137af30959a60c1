import assert from "node:assert/strict";
import { dirname } from "node:path";
import { lchown } from "node:fs/promises";
import { makeTree, NEEDS_ROOT, tempDir, tempFile } from "../_cli.ts";
import { serveFailure, serveOn, startServe, tempSocket } from "./_serve.ts";

const PLUGINS = {
  "router/plugin.yaml": "name: router\nhooks:\n  task.route: route.sh\n",
  "router/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/x\n",
};

Deno.test("serve: the socket is mode 0600, and it is removed when the daemon stops", async () => {
  await using d = await serveOn(await makeTree(PLUGINS));
  const socket = d.socket!;
  const info = await Deno.lstat(socket);
  assert.ok(info.isSocket);
  assert.equal(info.mode! & 0o777, 0o600);
  assert.equal((await d.call("GET", "/v1/health")).status, 200);
  const { code, stderr } = await d.stop();
  assert.equal(code, 0, stderr);
  await assert.rejects(Deno.lstat(socket), Deno.errors.NotFound);
});

Deno.test("serve: the default socket is tyhooks.sock in $XDG_RUNTIME_DIR", async () => {
  const runtime = await tempDir({ prefix: "tyh-" });
  await using d = await startServe(["--plugins-dir", await makeTree(PLUGINS)], {
    env: { XDG_RUNTIME_DIR: runtime },
  });
  assert.equal(d.socket, `${runtime}/tyhooks.sock`);
  assert.equal((await d.call("GET", "/v1/health")).status, 200);
});

Deno.test("serve: without $XDG_RUNTIME_DIR the default socket is <cache>/tyhooks/tyhooks.sock, and the start line names it", async () => {
  const cache = await tempDir({ prefix: "tyh-" });
  await using d = await startServe(["--plugins-dir", await makeTree(PLUGINS)], {
    env: { XDG_RUNTIME_DIR: "", XDG_CACHE_HOME: cache },
  });
  assert.equal(d.socket, `${cache}/tyhooks/tyhooks.sock`);
  assert.match(
    d.stderr(),
    new RegExp(`^tyhooks: info: Listening on unix:${cache}/tyhooks/tyhooks\\.sock `, "m"),
  );
  assert.equal((await d.call("GET", "/v1/health")).status, 200);
});

Deno.test("serve: a stale socket from a dead daemon is replaced", async () => {
  const socket = await tempSocket();
  const first = await startServe(["--listen", `unix:${socket}`]);
  await first.stop("SIGKILL"); // Dies without cleaning up: its socket file stays.
  assert.ok((await Deno.lstat(socket)).isSocket);
  await using second = await startServe(["--listen", `unix:${socket}`]);
  assert.equal((await second.call("GET", "/v1/health")).status, 200);
});

Deno.test("serve: a live daemon's socket is refused with an error naming the path", async () => {
  const socket = await tempSocket();
  await using live = await startServe(["--listen", `unix:${socket}`]);
  const r = await serveFailure(["--listen", `unix:${socket}`]);
  assert.equal(r.code, 1);
  assert.match(r.stderr, new RegExp(`Another daemon is listening on "${socket}"`));
  // The live daemon is untouched.
  assert.equal((await live.call("GET", "/v1/health")).status, 200);
});

Deno.test("serve: a non-loopback TCP address without --token-file is a usage error (64)", async () => {
  const r = await serveFailure(["--listen", "0.0.0.0:0"]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Refusing to listen on "0\.0\.0\.0:0" without "--token-file"/);
  assert.match(r.stderr, /hint:/);
});

Deno.test("serve: loopback TCP needs no token", async () => {
  await using d = await startServe(["--listen", "127.0.0.1:0"]);
  assert.match(d.base, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.equal((await d.call("GET", "/v1/health")).status, 200);
});

Deno.test("serve: with --token-file every request needs the bearer token (401 otherwise)", async () => {
  const tokenFile = `${dirname(await tempSocket())}/token`;
  await Deno.writeTextFile(tokenFile, "s3cret-token\n", { mode: 0o600 });
  // Any address: the token is what guards it. 0.0.0.0 would be reachable from elsewhere, so
  // the test listens on loopback and checks the same rule.
  await using d = await startServe(["--listen", "127.0.0.1:0", "--token-file", tokenFile]);
  const none = await d.call("GET", "/v1/health");
  assert.equal(none.status, 401);
  assert.match(none.body.error, /bearer token/);
  const wrong = await d.call("GET", "/v1/health", undefined, {
    authorization: "Bearer s3cret-tokeX",
  });
  assert.equal(wrong.status, 401);
  // Unknown paths are 401 too: nothing is told to a client without the token.
  assert.equal((await d.call("GET", "/v1/nope")).status, 401);
  const right = await d.call("GET", "/v1/health", undefined, {
    authorization: "Bearer s3cret-token",
  });
  assert.equal(right.status, 200);
});

Deno.test("serve: a bad --listen or --max-procs is a usage error naming the flag", async () => {
  const listen = await serveFailure(["--listen", "nowhere"]);
  assert.equal(listen.code, 64);
  assert.match(listen.stderr, /Invalid value "nowhere" for flag "--listen"/);
  const procs = await serveFailure(["--max-procs", "0"]);
  assert.equal(procs.code, 64);
  assert.match(procs.stderr, /Invalid value "0" for flag "--max-procs"/);
});

Deno.test("serve: an address that cannot be bound is an error naming it (exit 1)", async () => {
  const taken = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  try {
    const { port } = taken.addr as Deno.NetAddr;
    const r = await serveFailure(["--listen", `127.0.0.1:${port}`]);
    assert.equal(r.code, 1);
    assert.match(r.stderr, new RegExp(`Cannot listen on "127\\.0\\.0\\.1:${port}": `));
    // A file where the socket's directory should be: no user, root included, can bind there.
    const file = await tempFile({ prefix: "tyh-" });
    const blocked = await serveFailure(["--listen", `unix:${file}/t.sock`]);
    assert.equal(blocked.code, 1);
    assert.match(blocked.stderr, new RegExp(`Cannot listen on "unix:${file}/t\\.sock": `));
  } finally {
    taken.close();
  }
});

// With XDG_CACHE_HOME in a shared dir, another user who owns the socket's dir could unlink the
// socket, bind their own and answer the victim's tool calls "allow".
Deno.test({
  name: "serve: a socket dir another user could write to is refused, naming why",
  ...NEEDS_ROOT,
  async fn() {
    const shared = await tempDir({ prefix: "tyh-" });
    await Deno.chmod(shared, 0o1777); // As /tmp: world-writable, sticky.
    const theirs = `${shared}/theirs`;
    await Deno.mkdir(theirs, { mode: 0o777 });
    await Deno.chown(theirs, 65534, 65534);
    const open = `${shared}/open`;
    await Deno.mkdir(open);
    await Deno.chmod(open, 0o777); // World-writable, not sticky.
    await Deno.symlink(open, `${shared}/link`);
    await lchown(`${shared}/link`, 65534, 65534);
    const refused = [
      [`${theirs}/tyhooks.sock`, /"[^"]*theirs" belongs to another user \(uid 65534\)/],
      [`${open}/tyhooks.sock`, /"[^"]*open" is writable by group or others and not sticky/],
      [`${shared}/link/tyhooks.sock`, /"[^"]*link" belongs to another user/],
    ] as const;
    for (const [socket, why] of refused) {
      const r = await serveFailure(["--listen", `unix:${socket}`]);
      assert.equal(r.code, 1, r.stderr);
      assert.match(r.stderr, /another user could replace it/);
      assert.match(r.stderr, why);
    }
    // The default socket, through a shared cache dir whose tyhooks/ the other user made first.
    await Deno.mkdir(`${shared}/tyhooks`, { mode: 0o777 });
    await Deno.chown(`${shared}/tyhooks`, 65534, 65534);
    const viaCache = await serveFailure([], {
      env: { XDG_RUNTIME_DIR: "", XDG_CACHE_HOME: shared },
    });
    assert.equal(viaCache.code, 1, viaCache.stderr);
    assert.match(viaCache.stderr, /tyhooks" belongs to another user \(uid 65534\)/);
  },
});

// Nobody else can unlink a socket in a sticky dir (as /tmp), but anyone can bind its name while no
// daemon runs, and clients would then talk to them: the agent fast path and doctor refuse it.
Deno.test("serve: a socket in a sticky dir that others can write (as /tmp) is refused, naming why, and nothing is left there", async () => {
  const shared = await tempDir({ prefix: "tyh-" });
  await Deno.chmod(shared, 0o1777);
  const r = await serveFailure(["--listen", `unix:${shared}/tyhooks.sock`]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(
    r.stderr,
    /Cannot use socket ".*\/tyhooks\.sock": the socket's dir ".*" is writable by group or others \(mode 1777\)/,
  );
  assert.match(r.stderr, /^hint: use a directory only you can write to/m);
  assert.deepEqual([...Deno.readDirSync(shared)], []);
});

Deno.test("serve: a socket path below a dir others can write is refused before any dir is made for it", async () => {
  const open = await tempDir({ prefix: "tyh-" });
  await Deno.chmod(open, 0o777);
  const r = await serveFailure(["--listen", `unix:${open}/sub/tyhooks.sock`]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /another user could replace it: ".*" is writable by group or others/);
  assert.deepEqual([...Deno.readDirSync(open)], []);
});
