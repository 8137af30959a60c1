import assert from "node:assert/strict";
import {
  errorResponse,
  HttpError,
  MAX_BODY_BYTES,
  parseBody,
  readBody,
} from "../../lib/serve/http.ts";
import { ConnServer } from "../../lib/serve/conn_server.ts";
import { EventBodySchema, TaskBodySchema } from "../../lib/wire/task.ts";
import { ToolCallSchema } from "../../lib/consult/tool_hooks.ts";

const post = (body: BodyInit | null, headers: HeadersInit = {}) =>
  new Request("http://x/", { method: "POST", body, headers });

function status(expected: number) {
  return (e: Error) => e instanceof HttpError && e.status === expected;
}

Deno.test("parseBody() takes an empty body as {}", async () => {
  assert.deepEqual(await parseBody(post(null), EventBodySchema), { message: "" });
  assert.deepEqual(await parseBody(post("  \n"), EventBodySchema), { message: "" });
});

Deno.test("parseBody() refuses malformed JSON, non-objects and bad fields with 400", async () => {
  const schema = TaskBodySchema;
  await assert.rejects(parseBody(post("{"), schema), status(400));
  await assert.rejects(parseBody(post("[]"), schema), status(400));
  await assert.rejects(parseBody(post("null"), schema), status(400));
  await assert.rejects(parseBody(post('{"task":{"id":"x"}}'), schema), (e: Error) => {
    assert.ok(status(400)(e));
    assert.equal(e.message, 'Invalid request body: "task.id": expected an integer, got "x"');
    return true;
  });
});

Deno.test("parseBody() survives hostile JSON: deep nesting and NUL bytes", async () => {
  const schema = ToolCallSchema;
  const deep = "[".repeat(500_000) + "]".repeat(500_000);
  await assert.rejects(parseBody(post(deep), schema), status(400));
  const nul = await parseBody(post('{"tool":"a\\u0000b"}'), schema);
  assert.equal(nul.tool, "a\0b");
});

Deno.test("readBody() refuses more than 1 MiB sent without a Content-Length (streamed) with 413", async () => {
  // A Request made here declares no length: both bodies take the streamed path.
  const big = new Uint8Array(MAX_BODY_BYTES + 1);
  await assert.rejects(readBody(post(big)), status(413));
  const streamed = new Blob([big]).stream();
  await assert.rejects(readBody(post(streamed)), status(413));
  assert.equal((await readBody(post(new Uint8Array(MAX_BODY_BYTES)))).length, MAX_BODY_BYTES);
});

Deno.test("readBody() answers 413 from a declared Content-Length over 1 MiB, before any of the body is sent", async () => {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const server = new ConnServer(listener, async (request) => {
    try {
      await readBody(request);
      return new Response("read");
    } catch (error) {
      return errorResponse(error);
    }
  }, { onError: errorResponse });
  const conn = await Deno.connect({ hostname: "127.0.0.1", port: listener.addr.port });
  try {
    // Headers only: a body that is never sent cannot be what the answer waited for (that would
    // be 408, after 10 s).
    await conn.write(
      new TextEncoder().encode(
        "POST /v1/route HTTP/1.1\r\nHost: x\r\nContent-Length: 2000000\r\n\r\n",
      ),
    );
    const buffer = new Uint8Array(4096);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const late = new Promise<null>((r) => timer = setTimeout(() => r(null), 5000));
    const n = await Promise.race([conn.read(buffer), late]);
    clearTimeout(timer);
    assert.match(new TextDecoder().decode(buffer.subarray(0, n ?? 0)), /^HTTP\/1\.1 413 /);
  } finally {
    conn.close();
    await server.shutdown();
  }
});

Deno.test("parseBody() refuses a body that is not UTF-8 with 400 instead of mangling it", async () => {
  const schema = ToolCallSchema;
  const bytes = new Uint8Array([
    ...new TextEncoder().encode('{"tool":"'),
    0xff,
    0xfe,
    ...new TextEncoder().encode('"}'),
  ]);
  await assert.rejects(parseBody(post(bytes), schema), (e: Error) => {
    assert.ok(status(400)(e));
    assert.match(e.message, /Malformed request body: not valid UTF-8/);
    return true;
  });
});

Deno.test("readBody() gives up on a client that stalls mid-body with 408", async () => {
  const stalled = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"task":'));
    },
  });
  await assert.rejects(readBody(post(stalled), { timeoutMs: 100 }), status(408));
});

Deno.test("readBody() gives up with 408 on a client that declares its length and stalls", async () => {
  const stalled = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode('{"task":'));
    },
  });
  await assert.rejects(
    readBody(post(stalled, { "content-length": "100" }), { timeoutMs: 100 }),
    status(408),
  );
  const whole = await readBody(post('{"a":1}', { "content-length": "7" }));
  assert.equal(new TextDecoder().decode(whole), '{"a":1}');
});

Deno.test("readBody() answers a body the client stopped sending with 400, not 500", async () => {
  // What Deno gives when the client closes its side or resets mid-body: the stream errors.
  const cut = () =>
    new ReadableStream<Uint8Array>({
      start(controller) {
        controller.enqueue(new TextEncoder().encode('{"tool":'));
        controller.error(new Error("connection reset"));
      },
    });
  for (const headers of [{}, { "content-length": "100" }] as Record<string, string>[]) {
    await assert.rejects(readBody(post(cut(), headers)), (e: Error) => {
      assert.ok(status(400)(e), `${e.name}: ${e.message}`);
      assert.match(e.message, /^Request body cut short: connection reset/);
      return true;
    });
  }
});
