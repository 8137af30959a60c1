import assert from "node:assert/strict";
import { capture } from "../../lib/process/run_script.ts";

/** A byte stream (like a child's pipe) that delivers `chunks` in order. */
function byteStream(chunks: Uint8Array[]): ReadableStream<Uint8Array> {
  return new ReadableStream({
    type: "bytes",
    pull(controller) {
      const next = chunks.shift();
      if (next === undefined) {
        controller.close();
        // A byte stream closed under a pending BYOB read must answer it, as Deno's pipes do.
        controller.byobRequest?.respond(0);
      } else {
        controller.enqueue(next);
      }
    },
  });
}

function pattern(length: number, seed: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (i * 7 + seed) % 251);
}

Deno.test("capture() keeps every byte of a pipe, in order, across reads of growing size", async () => {
  const parts = [pattern(10, 1), pattern(200_000, 2), pattern(3, 3), pattern(70_000, 4)];
  const expected = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    expected.set(part, offset);
    offset += part.length;
  }
  const got = await capture(byteStream(parts.map((p) => p.slice())), 1 << 20).done;
  assert.equal(got.total, expected.length);
  assert.equal(got.truncated, false);
  assert.deepEqual(got.bytes, expected);
});

Deno.test("capture() of a pipe keeps the first cap bytes and counts the rest", async () => {
  const big = pattern(300_000, 5);
  const got = await capture(byteStream([big.slice()]), 1000).done;
  assert.equal(got.total, 300_000);
  assert.equal(got.truncated, true);
  assert.deepEqual(got.bytes, big.subarray(0, 1000));
});

Deno.test("capture() reads a stream that is not a byte stream as it comes", async () => {
  const got = await capture(new Blob(["hello world"]).stream(), 5).done;
  assert.equal(new TextDecoder().decode(got.bytes), "hello");
  assert.equal(got.total, 11);
});

Deno.test("capture() abandoned on a stream that never ends returns what was read so far", async () => {
  let pulls = 0;
  const endless = new ReadableStream<Uint8Array>({
    type: "bytes",
    pull(controller) {
      // First pull: one chunk. Then nothing ever again, like a pipe an escaped child holds.
      if (pulls++ > 0) return new Promise(() => {});
      controller.enqueue(new TextEncoder().encode("ready"));
      return Promise.resolve();
    },
  });
  const running = capture(endless, 100);
  while (pulls < 2) await new Promise((r) => setTimeout(r, 0));
  running.abandon();
  const got = await running.done;
  assert.equal(new TextDecoder().decode(got.bytes), "ready");
});
