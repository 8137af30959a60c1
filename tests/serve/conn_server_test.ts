import assert from "node:assert/strict";
import { join } from "node:path";
import { ConnServer, serveOnConnection } from "../../lib/serve/conn_server.ts";
import type { Logger } from "../../lib/log.ts";
import { ROOT } from "../_cli.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

function start(limits: { maxConns?: number; headersTimeoutMs?: number; idleTimeoutMs?: number }) {
  const lines: string[] = [];
  const log: Logger = { log: (level, message) => lines.push(`${level}: ${message}`) };
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const server = new ConnServer(listener, async (request) => {
    await request.body?.cancel();
    return new Response("ok");
  }, { ...limits, onError: () => new Response("error", { status: 500 }), log });
  return { server, port: listener.addr.port, lines };
}

/** Reads until the peer closes (null) or `limit` reads; returns what was read and whether it closed. */
async function readToEnd(conn: Deno.Conn, limit = 100): Promise<{ text: string; closed: boolean }> {
  const buffer = new Uint8Array(4096);
  let text = "";
  for (let i = 0; i < limit; i++) {
    let n: number | null;
    try {
      n = await conn.read(buffer);
    } catch {
      return { text, closed: true };
    }
    if (n === null) return { text, closed: true };
    text += decoder.decode(buffer.subarray(0, n));
  }
  return { text, closed: false };
}

Deno.test("this Deno has the per-connection HTTP server the daemon is built on", () => {
  assert.equal(typeof serveOnConnection(), "function");
});

Deno.test("ConnServer closes connections past maxConns at once and serves again when they go", async () => {
  const { server, port, lines } = start({ maxConns: 5, headersTimeoutMs: 60_000 });
  const conns: Deno.Conn[] = [];
  try {
    for (let i = 0; i < 8; i++) conns.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    // The last three are closed without a byte; the first five stay open (nothing to read yet).
    const extra = await Promise.all(conns.slice(5).map((conn) => readToEnd(conn)));
    assert.deepEqual(extra, [0, 1, 2].map(() => ({ text: "", closed: true })));
    assert.equal(server.refused, 3);
    assert.equal(server.connections, 5);
    assert.ok(lines.some((l) => l.startsWith("warn: Too many connections")), lines.join("\n"));
    for (const conn of conns) conn.close();
    conns.length = 0;
    // Closed on the client side: the server notices and serves a new client.
    for (let i = 0; i < 100 && server.connections > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const answer = await fetch(`http://127.0.0.1:${port}/`);
    assert.equal(await answer.text(), "ok");
  } finally {
    for (const conn of conns) conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnServer cuts a client sending its headers too slowly (slowloris)", async () => {
  const { server, port } = start({ headersTimeoutMs: 300, idleTimeoutMs: 60_000 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n"));
    // One header byte every 50 ms, bounded: the server must close before the 200th.
    let cut = false;
    for (let i = 0; i < 200 && !cut; i++) {
      await new Promise((r) => setTimeout(r, 50));
      try {
        await conn.write(encoder.encode("X"));
      } catch {
        cut = true;
      }
    }
    if (!cut) cut = (await readToEnd(conn, 1)).closed;
    assert.ok(cut, "the connection should have been closed");
    assert.equal(server.connections, 0);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnServer closes an idle keep-alive connection after the idle timeout", async () => {
  const { server, port } = start({ headersTimeoutMs: 60_000, idleTimeoutMs: 300 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    // The answer, then the close: the read ends with the peer closing, not the read limit.
    const { text, closed } = await readToEnd(conn);
    assert.match(text, /^HTTP\/1\.1 200 OK/);
    assert.ok(closed);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnServer closes a connection that never sends a header after the headers timeout", async () => {
  const { server, port } = start({ headersTimeoutMs: 300, idleTimeoutMs: 60_000 });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    assert.deepEqual(await readToEnd(conn), { text: "", closed: true });
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("ConnServer logs running out of file descriptors, survives, and serves once they are freed", async () => {
  const child = new Deno.Command("sh", {
    args: [
      "-c",
      'ulimit -n 256 && exec "$@"',
      "sh",
      Deno.execPath(),
      "run",
      "--allow-all",
      join(ROOT, "tests/serve/_emfile_server.ts"),
    ],
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const out = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  const writer = child.stdin.getWriter();
  let stdout = "";
  const nextLine = async (prefix: string) => {
    for (let i = 0; i < 100 && !stdout.split("\n").some((l) => l.startsWith(prefix)); i++) {
      const { value, done } = await out.read();
      if (done) break;
      stdout += value;
    }
    return stdout.split("\n").find((l) => l.startsWith(prefix)) ?? "";
  };
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of child.stderr.pipeThrough(new TextDecoderStream())) stderr += chunk;
  })();
  const clients: Deno.Conn[] = [];
  try {
    const port = Number((await nextLine("port ")).split(" ")[1]);
    assert.ok(port > 0, stdout);
    assert.match(await nextLine("exhausted"), /^exhausted \d+$/);
    // Connections land in the backlog; accepting them fails with EMFILE.
    for (let i = 0; i < 3; i++) clients.push(await Deno.connect({ hostname: "127.0.0.1", port }));
    for (const conn of clients) {
      await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    }
    for (let i = 0; i < 200 && !stderr.includes("Cannot accept"); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.match(stderr, /"msg":"Cannot accept a connection".*Too many open files/);
    await writer.write(encoder.encode("free\n"));
    assert.equal(await nextLine("freed"), "freed");
    // Served once descriptors are free again: the daemon did not crash.
    for (const conn of clients) assert.match((await readToEnd(conn, 1)).text, /^HTTP\/1\.1 200 OK/);
    await writer.write(encoder.encode("exit\n"));
    await writer.close();
  } finally {
    for (const conn of clients) conn.close();
    await out.cancel().catch(() => {});
    const status = await child.status;
    await reading;
    assert.equal(status.code, 0, stderr);
  }
});
