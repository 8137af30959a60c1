import assert from "node:assert/strict";
import { relayLines } from "../../lib/services/line_relay.ts";

function streamOf(chunks: (string | Uint8Array)[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream({
    start(controller) {
      for (const c of chunks) controller.enqueue(typeof c === "string" ? encoder.encode(c) : c);
      controller.close();
    },
  });
}

async function relay(chunks: (string | Uint8Array)[], maxLineBytes?: number): Promise<string[]> {
  const lines: string[] = [];
  await relayLines(streamOf(chunks), (l) => lines.push(l), { maxLineBytes }).done;
  return lines;
}

Deno.test("relayLines() emits whole lines across chunk boundaries and drops CR of CRLF", async () => {
  assert.deepEqual(await relay(["on", "e\ntw", "o\r\n\nthree\n"]), ["one", "two", "", "three"]);
});

Deno.test("relayLines() flushes a partial last line when the stream ends", async () => {
  assert.deepEqual(await relay(["done\npart", "ial"]), ["done", "partial"]);
});

Deno.test("relayLines() cuts a line longer than the limit into pieces of at most the limit", async () => {
  const lines = await relay(["x".repeat(25), "y".repeat(10), "\nz\n"], 10);
  assert.deepEqual(lines, [
    "x".repeat(10),
    "x".repeat(10),
    "x".repeat(5) + "y".repeat(5),
    "y".repeat(5),
    "z",
  ]);
});

Deno.test("relayLines() never cuts a UTF-8 character in two", async () => {
  const lines = await relay(["abcdefgh\u00e9\u20ac\n"], 9); // é is 2 bytes, € is 3.
  assert.deepEqual(lines, ["abcdefgh", "\u00e9\u20ac"]);
  assert.ok(lines.every((l) => !l.includes("\ufffd")));
});

Deno.test("relayLines() keeps memory bounded on a huge line without a newline", async () => {
  const chunk = new Uint8Array(1024 * 1024).fill(97);
  let pieces = 0;
  let longest = 0;
  let total = 0;
  await relayLines(streamOf(Array(64).fill(chunk)), (l) => {
    pieces++;
    total += l.length;
    longest = Math.max(longest, l.length);
  }).done;
  assert.equal(total, 64 * 1024 * 1024);
  assert.equal(longest, 64 * 1024);
  assert.equal(pieces, 1024);
});

Deno.test("relayLines() flushes what it has when abandoned while the writer keeps the pipe open", async () => {
  let controller!: ReadableStreamDefaultController<Uint8Array>;
  const stream = new ReadableStream<Uint8Array>({ start: (c) => void (controller = c) });
  const lines: string[] = [];
  const relay = relayLines(stream, (l) => lines.push(l));
  controller.enqueue(new TextEncoder().encode("whole\nhalf"));
  await new Promise((r) => setTimeout(r, 10));
  relay.abandon();
  await relay.done;
  assert.deepEqual(lines, ["whole", "half"]);
});
