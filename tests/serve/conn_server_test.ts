import assert from "node:assert/strict";
import { join } from "node:path";
import { ConnServer, serveOnConnection } from "../../lib/serve/conn_server.ts";
import type { Logger } from "../../lib/log.ts";
import { ROOT } from "../_cli.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

async function answerOk(request: Request): Promise<Response> {
  await request.body?.cancel();
  return new Response("ok");
}

/** A server's limits, and its handler (default: answer "ok"). */
interface StartOptions {
  maxConns?: number;
  headersTimeoutMs?: number;
  idleTimeoutMs?: number;
  handler?: (request: Request) => Promise<Response>;
}

function start({ handler = answerOk, ...limits }: StartOptions) {
  const lines: string[] = [];
  const log: Logger = { log: (level, message) => lines.push(`${level}: ${message}`) };
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const server = new ConnServer(listener, handler, {
    ...limits,
    onError: () => new Response("error", { status: 500 }),
    log,
  });
  return { server, port: listener.addr.port, lines };
}

/** Runs `fn` with one client connected to a server started with `options`, then closes both. */
async function withClient(
  options: StartOptions,
  fn: (conn: Deno.Conn, started: { server: ConnServer; port: number }) => Promise<void>,
): Promise<void> {
  const { server, port } = start(options);
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await fn(conn, { server, port });
  } finally {
    conn.close();
    await server.shutdown();
  }
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

/** {@linkcode readToEnd}, giving up after `ms` (then `closed` is false). */
async function readForAtMost(
  conn: Deno.Conn,
  ms: number,
): Promise<{ text: string; closed: boolean }> {
  const buffer = new Uint8Array(4096);
  let text = "";
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<"late">((r) =>
      timer = setTimeout(() => r("late"), deadline - Date.now())
    );
    const n = await Promise.race([conn.read(buffer).catch(() => null), late]);
    clearTimeout(timer);
    if (n === "late") break;
    if (n === null) return { text, closed: true };
    text += decoder.decode(buffer.subarray(0, n));
  }
  return { text, closed: false };
}

// A client speaking HTTP/2 with prior knowledge (h2c), written by hand: the connection preface,
// an empty SETTINGS frame, and GET requests as HEADERS frames (HPACK, literals only).
const H2_PREFACE = "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n";

function h2Frame(type: number, flags: number, stream: number, payload: number[]): number[] {
  const n = payload.length;
  return [n >> 16, (n >> 8) & 0xff, n & 0xff, type, flags, 0, 0, 0, stream, ...payload];
}

function h2Get(stream: number, path: string, host?: string): number[] {
  const literal = (text: string) => [text.length, ...encoder.encode(text)];
  // :method GET and :scheme http from the static table, :path a literal with its name indexed.
  const block = [0x82, 0x86, 0x04, ...literal(path)];
  if (host !== undefined) block.push(0x00, ...literal("host"), ...literal(host));
  return h2Frame(0x1, 0x5, stream, block); // END_STREAM | END_HEADERS
}

function h2Client(...requests: number[][]): Uint8Array {
  return new Uint8Array([
    ...encoder.encode(H2_PREFACE),
    ...h2Frame(0x4, 0, 0, []),
    ...requests.flat(),
  ]);
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
  await withClient({ headersTimeoutMs: 300, idleTimeoutMs: 60_000 }, async (conn, { server }) => {
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
  });
});

Deno.test("ConnServer closes an idle keep-alive connection after the idle timeout", async () => {
  await withClient({ headersTimeoutMs: 60_000, idleTimeoutMs: 300 }, async (conn) => {
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    // The answer, then the close: the read ends with the peer closing, not the read limit.
    const { text, closed } = await readToEnd(conn);
    assert.match(text, /^HTTP\/1\.1 200 OK/);
    assert.ok(closed);
  });
});

Deno.test("ConnServer closes a connection that never sends a header after the headers timeout", async () => {
  await withClient({ headersTimeoutMs: 300, idleTimeoutMs: 60_000 }, async (conn) => {
    assert.deepEqual(await readToEnd(conn), { text: "", closed: true });
  });
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

Deno.test("ConnServer refuses an HTTP/2 request with 505 and closes its connection, the handler never called", async () => {
  let calls = 0;
  await withClient({
    handler: (request) => {
      calls++;
      return answerOk(request);
    },
  }, async (conn, { port }) => {
    await conn.write(h2Client(h2Get(1, "/v1/health")));
    const { text, closed } = await readForAtMost(conn, 10_000);
    assert.ok(closed, "the connection is still open");
    assert.match(text, /HTTP version not supported: the daemon speaks HTTP\/1\.1/);
    assert.equal(calls, 0);
    // An HTTP/1.1 client is served as before.
    assert.equal(await (await fetch(`http://127.0.0.1:${port}/`)).text(), "ok");
  });
});

Deno.test("ConnServer closes an HTTP/2 connection that sends a second request while one is answered", async () => {
  let calls = 0;
  const release = Promise.withResolvers<void>();
  await withClient({
    handler: async (request) => {
      calls++;
      await release.promise;
      return answerOk(request);
    },
  }, async (conn) => {
    try {
      // With a Host header, as an HTTP/1.1 request has: only the second request gives it away.
      const requests = [1, 3, 5, 7].map((stream) => h2Get(stream, "/v1/health", "x"));
      await conn.write(h2Client(...requests));
      const { closed } = await readForAtMost(conn, 10_000);
      assert.ok(closed, "the connection is still open");
      assert.equal(calls, 1);
    } finally {
      release.resolve();
    }
  });
});

Deno.test("ConnServer closes a kept-alive connection once an answer says Connection: close", async () => {
  await withClient({
    idleTimeoutMs: 60_000,
    handler: async (request) => {
      await request.body?.cancel();
      return new Response("bye", { status: 401, headers: { connection: "close" } });
    },
  }, async (conn) => {
    await conn.write(encoder.encode("GET / HTTP/1.1\r\nHost: x\r\n\r\n"));
    const { text, closed } = await readForAtMost(conn, 10_000);
    assert.match(text, /^HTTP\/1\.1 401 Unauthorized\r\n[^]*\r\n\r\nbye$/);
    assert.ok(closed, "the connection is still open");
  });
});

Deno.test("ConnServer answers a request without a Host header 505 and closes its connection", async () => {
  await withClient({ idleTimeoutMs: 60_000 }, async (conn) => {
    await conn.write(encoder.encode("GET / HTTP/1.0\r\n\r\n"));
    const { text, closed } = await readForAtMost(conn, 10_000);
    assert.match(text, /^HTTP\/1\.[01] 505 HTTP Version Not Supported\r\n/);
    assert.ok(closed, "the connection is still open");
  });
});
