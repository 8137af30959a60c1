/**
 * Fixture for conn_server_test.ts: a ConnServer on 127.0.0.1 in its own process, which then
 * opens /dev/null until the open files limit is reached, so `accept` fails with EMFILE. It
 * prints `port N` and then `exhausted`, logs as JSON lines on stderr, and frees the descriptors
 * when a line arrives on stdin; it exits on the second line.
 */

import { ConnServer } from "../../lib/serve/conn_server.ts";
import { createLogger } from "../../lib/log.ts";

const log = createLogger({ format: "json", level: "debug" });
const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
const server = new ConnServer(listener, () => new Response("ok"), {
  onError: () => new Response("error", { status: 500 }),
  log,
});
const encoder = new TextEncoder();
const say = (line: string) => Deno.stdout.writeSync(encoder.encode(`${line}\n`));
say(`port ${listener.addr.port}`);

const held: Deno.FsFile[] = [];
// Bounded: the test runs this under `ulimit -n 256`.
for (let i = 0; i < 100_000; i++) {
  try {
    held.push(Deno.openSync("/dev/null"));
  } catch {
    break;
  }
}
say(`exhausted ${held.length}`);

const lines = Deno.stdin.readable.pipeThrough(new TextDecoderStream()).getReader();
await lines.read();
for (const file of held) file.close();
say("freed");
await lines.read();
await server.shutdown();
