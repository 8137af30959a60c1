/**
 * The daemon under hostile clients (SPEC "Trust boundaries and hostile input"): a
 * connection flood at a low open files limit, on TCP and on the unix socket, a token file others
 * can read, and a flood of large events. Floods are bounded loops against 127.0.0.1 or a unix
 * socket, and every connection is closed at the end.
 */

import assert from "node:assert/strict";
import { lchown } from "node:fs/promises";
import { dirname, join } from "node:path";
import { makeTree, NEEDS_ROOT, tempDir } from "../_cli.ts";
import { pluginsHandling } from "./_trees.ts";
import { alive } from "../_procs.ts";
import { serveFailure, serveOn, type ServeProcess, startServe, tempSocket } from "./_serve.ts";

/** Runs the daemon with an open files limit of 256, as the attack was reproduced. */
const LOW_FD_LIMIT = ["sh", "-c", 'ulimit -n 256 && exec "$@"', "sh"];
const FLOOD = 240;

/** A token file of its own temp dir, holding "s3cret". */
async function tokenFile(): Promise<string> {
  const file = join(await tempDir(), "token");
  await Deno.writeTextFile(file, "s3cret\n", { mode: 0o600 });
  return file;
}

/**
 * The status of GET /v1/health with the token, asked every 100 ms until it is 200 or `tries`
 * asks are spent: a daemon that was flooded answers once it has seen the flood go.
 */
async function healthWithToken(d: ServeProcess, tries: number): Promise<number> {
  let status = 0;
  for (let i = 0; i < tries && status !== 200; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, 100));
    const auth = { authorization: "Bearer s3cret" };
    status = await d.call("GET", "/v1/health", undefined, auth).then((a) => a.status, () => 0);
  }
  return status;
}

async function flood(connect: () => Promise<Deno.Conn>): Promise<Deno.Conn[]> {
  const conns: Deno.Conn[] = [];
  for (let i = 0; i < FLOOD; i++) {
    try {
      conns.push(await connect());
    } catch {
      break; // A full backlog may refuse: the flood is what got in.
    }
  }
  return conns;
}

for (const transport of ["tcp", "unix"] as const) {
  Deno.test(`serve: ${FLOOD} idle ${transport} connections at an open files limit of 256 do not crash a token-protected daemon`, async () => {
    const socket = await tempSocket();
    const dir = dirname(socket);
    const listen = transport === "tcp" ? "127.0.0.1:0" : `unix:${socket}`;
    const d = await startServe(
      ["--listen", listen, "--token-file", await tokenFile(), "--plugins-dir", dir],
      { wrap: LOW_FD_LIMIT },
    );
    let conns: Deno.Conn[] = [];
    try {
      const [hostname, port] = d.base.replace("http://", "").split(":");
      conns = await flood(() =>
        transport === "tcp"
          ? Deno.connect({ hostname, port: Number(port) })
          : Deno.connect({ transport: "unix", path: socket })
      );
      assert.ok(conns.length >= 229, `only ${conns.length} connections got in`);
      // Alive and answering while flooded? Those past the cap were closed at once.
      for (let i = 0; i < 100 && !d.stderr().includes("Too many connections"); i++) {
        await new Promise((r) => setTimeout(r, 50));
      }
      assert.ok(alive(d.pid), d.stderr());
      // The limit in effect is said once, in the start line.
      assert.match(
        d.stderr(),
        /Serving fewer than 256 connections: the open files limit is 256, and 64 descriptors/,
      );
      assert.match(d.stderr(), /Listening on .*max_conns=192\)/);
      assert.doesNotMatch(d.stderr(), /max_conns=256/);
      assert.match(d.stderr(), /Too many connections: closed new ones at once/);
      for (const conn of conns) conn.close();
      conns = [];
      // Afterwards it answers, and still wants the token.
      assert.equal(await healthWithToken(d, 100), 200, d.stderr());
      assert.equal((await d.call("GET", "/v1/health")).status, 401);
      const { code, stderr } = await d.stop();
      assert.equal(code, 0, stderr);
      assert.doesNotMatch(stderr, /panicked|Uncaught/);
    } finally {
      for (const conn of conns) conn.close();
      await d.kill();
      await Deno.remove(dir, { recursive: true });
    }
  });
}

Deno.test("serve: clients without the token hold no connection: with --max-conns 8 and 8 of them kept alive, the token holder gets 200", async () => {
  const token = await tokenFile();
  const d = await startServe([
    "--listen",
    "127.0.0.1:0",
    "--token-file",
    token,
    "--plugins-dir",
    dirname(token),
    "--max-conns",
    "8",
  ]);
  const clients: Deno.Conn[] = [];
  try {
    const [hostname, port] = d.base.replace("http://", "").split(":");
    const buffer = new Uint8Array(4096);
    for (let i = 0; i < 8; i++) {
      const conn = await Deno.connect({ hostname, port: Number(port) });
      clients.push(conn);
      // Kept alive: the client neither closes nor stops asking.
      await conn.write(
        new TextEncoder().encode("GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
      );
      const n = await conn.read(buffer);
      assert.match(new TextDecoder().decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.1 401 /);
    }
    assert.equal(await healthWithToken(d, 50), 200, d.stderr());
  } finally {
    for (const conn of clients) conn.close();
    await d.kill();
  }
});

Deno.test("serve: a --token-file others can read is a usage error naming its mode (exit 64)", async () => {
  const file = await tokenFile();
  await Deno.chmod(file, 0o644);
  const r = await serveFailure(["--listen", "127.0.0.1:0", "--token-file", file]);
  assert.equal(r.code, 64);
  assert.match(
    r.stderr,
    /Invalid --token-file ".*token": mode 0644 lets group or others access it/,
  );
  assert.match(r.stderr, /hint: chmod 600 /);
});

Deno.test(
  "serve: a --token-file named through a symlink another user owns is a usage error naming the link (exit 64)",
  NEEDS_ROOT,
  async () => {
    const file = await tokenFile();
    const link = join(dirname(file), "link");
    await Deno.symlink(file, link);
    await lchown(link, 65534, 65534);
    const r = await serveFailure(["--listen", "127.0.0.1:0", "--token-file", link]);
    assert.equal(r.code, 64, r.stderr);
    assert.match(
      r.stderr,
      /Invalid --token-file ".*link": it is named through ".*link", a symlink owned by user 65534/,
    );
  },
);

Deno.test("serve: a --max-conns that is not a whole number is a usage error naming the flag", async () => {
  const r = await serveFailure(["--max-conns", "many"]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Invalid value "many" for flag "--max-conns"/);
});

function rssMb(pid: number): number {
  const status = Deno.readTextFileSync(`/proc/${pid}/status`);
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? NaN) / 1024;
}

Deno.test("serve: 300 spooled 1 MB events are bounded by bytes: the rest are refused, memory stays bounded", async () => {
  const plugins = await pluginsHandling("task.done", {
    // Holds the only event slot, so the events pile up in the queue.
    slow: "#!/bin/sh\nexec sleep 30\n",
  });
  const d = await serveOn(plugins, ["--max-procs", "1", "--stop-timeout", "500ms"]);
  try {
    await d.call("GET", "/v1/health");
    const before = rssMb(d.pid);
    // The task's body: not passed in the environment, so the hook starts whatever its size.
    const body = JSON.stringify({ task: { id: 1, body: "x".repeat(1_000_000) } });
    const statuses: number[] = [];
    for (let i = 0; i < 300; i++) {
      statuses.push((await d.call("POST", "/v1/events/task.done", body)).status);
    }
    const after = rssMb(d.pid);
    const accepted = statuses.filter((s) => s === 202).length;
    // 64 MiB holds 67 such events; without the byte bound all 300 were queued (+350 MB).
    assert.ok(accepted >= 60 && accepted <= 68, `${accepted} accepted`);
    assert.equal(statuses.filter((s) => s === 503).length, 300 - accepted);
    assert.match(d.stderr(), /Spool full: refused "task.done"/);
    assert.ok(after - before < 64 + 96, `RSS grew from ${before} MB to ${after} MB`);
  } finally {
    await d.stop();
  }
});

Deno.test("serve on loopback TCP refuses web pages: a request with an Origin, or a Host no loopback name, is 403 and runs nothing", async () => {
  const out = await tempDir();
  const plugins = await makeTree({
    "g/plugin.yaml": "name: g\nactions:\n  - id: a\n    label: A\n    command: a.sh\n",
    "g/a.sh": `#!/bin/sh\necho ran >> "${out}/ran"\n`,
  });
  const d = await startServe(["--listen", "127.0.0.1:0", "--plugins-dir", plugins]);
  try {
    const [hostname, port] = d.base.replace("http://", "").split(":");
    // What a page's form POST sends (no preflight for text/plain), and what a rebound name does.
    const post = async (headers: string) => {
      const conn = await Deno.connect({ hostname, port: Number(port) });
      await conn.write(new TextEncoder().encode(
        `POST /v1/actions/g/a HTTP/1.1\r\n${headers}Content-Type: text/plain\r\n` +
          "Content-Length: 2\r\nConnection: close\r\n\r\n{}",
      ));
      const answer = await new Response(conn.readable).text();
      return answer.split("\r\n")[0];
    };
    const page = await post(`Host: 127.0.0.1:${port}\r\nOrigin: https://evil.example\r\n`);
    assert.equal(page, "HTTP/1.1 403 Forbidden");
    assert.equal(await post(`Host: evil.example:${port}\r\n`), "HTTP/1.1 403 Forbidden");
    assert.equal(await Deno.stat(join(out, "ran")).catch(() => null), null);
    // Control: the same request as a local client sends it runs the action.
    assert.equal(await post(`Host: localhost:${port}\r\n`), "HTTP/1.1 200 OK");
    assert.equal(await Deno.readTextFile(join(out, "ran")), "ran\n");
  } finally {
    await d.kill();
  }
});

for (const transport of ["tcp", "unix"] as const) {
  Deno.test(`serve on ${transport}: a Host header no URL can be made of is 400 naming it, and runs nothing`, async () => {
    const out = await tempDir();
    const plugins = await makeTree({
      "g/plugin.yaml": "name: g\nactions:\n  - id: a\n    label: A\n    command: a.sh\n",
      "g/a.sh": `#!/bin/sh\necho ran >> "${out}/ran"\n`,
    });
    const d = transport === "tcp"
      ? await startServe(["--listen", "127.0.0.1:0", "--plugins-dir", plugins])
      : await serveOn(plugins);
    try {
      const connect = () => {
        if (d.socket !== null) return Deno.connect({ transport: "unix", path: d.socket });
        const [hostname, port] = d.base.replace("http://", "").split(":");
        return Deno.connect({ hostname, port: Number(port) });
      };
      for (const host of ["[::1", "a b"]) {
        const conn = await connect();
        await conn.write(new TextEncoder().encode(
          `POST /v1/actions/g/a HTTP/1.1\r\nHost: ${host}\r\nContent-Length: 2\r\n` +
            "Connection: close\r\n\r\n{}",
        ));
        const answer = await new Response(conn.readable).text();
        assert.equal(answer.split("\r\n")[0], "HTTP/1.1 400 Bad Request", answer);
        const body = JSON.parse(answer.slice(answer.indexOf("\r\n\r\n") + 4));
        assert.ok(body.error.startsWith(`Malformed Host header "${host}": `), body.error);
      }
      assert.equal(await Deno.stat(join(out, "ran")).catch(() => null), null);
    } finally {
      await d.kill();
    }
  });
}
