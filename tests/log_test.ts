import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger, isoTime, QueuedWriter } from "../lib/log.ts";
import { escapeControl } from "../lib/text.ts";
import { cli, makeTree, tempDir } from "./_cli.ts";

Deno.test("text logs escape control characters in messages and fields as \\x1b", () => {
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l) });
  log.log("warn", "Hook said \x1b]0;pwned\x07", { path: "/p/a\x1b[31mb", detail: "x\ny", n: 1 });
  assert.equal(
    lines[0],
    "tyhooks: warn: Hook said \\x1b]0;pwned\\x07 (path=/p/a\\x1b[31mb detail=x\\x0ay n=1)\n",
  );
  // Runs of one character and of several, escaped alike.
  assert.equal(escapeControl("a\0\0\0b\x1b\x07\x1bc"), "a\\x00\\x00\\x00b\\x1b\\x07\\x1bc");
});

Deno.test("a plugin dir whose name holds ESC reaches stderr escaped, never raw", async () => {
  const root = await tempDir({ prefix: "tyhooks-log-" });
  const dir = join(root, "evil\x1b[31mred");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(join(dir, "plugin.yaml"), "name: [\n");
  const result = await cli(["plugins", "list", "--plugins-dir", root]);
  assert.ok(!result.stderr.includes("\x1b"), JSON.stringify(result.stderr));
  assert.match(result.stderr, /evil\\x1b\[31mred\/plugin\.yaml/);
});

Deno.test("text logs escape DEL and the one-byte CSI U+009B as \\x7f and \\x9b", () => {
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l) });
  log.log("warn", "a\x7fb\u009b2Jc", { out: "\u009b31m", n: "\x7f" });
  assert.equal(lines[0], "tyhooks: warn: a\\x7fb\\x9b2Jc (out=\\x9b31m n=\\x7f)\n");
});

Deno.test("a hook's DEL and U+009B reach stderr escaped, never raw", async () => {
  const plugins = await makeTree({
    "h/plugin.yaml": "name: h\nhooks:\n  task.started: hook.sh\n",
    "h/hook.sh": "#!/bin/sh\nprintf 'x\\177y\\302\\2332Jz' >&2\nexit 3\n",
  });
  const r = await cli([
    "fire",
    "task.started",
    "--task-json",
    '{"id":1}',
    "--plugins-dir",
    plugins,
  ]);
  assert.ok(!/[\x7f\u009b]/.test(r.stderr), JSON.stringify(r.stderr));
  assert.match(r.stderr, /x\\x7fy\\x9b2Jz/);
});

/**
 * A pipe to `cat`, whose output is read only once `resume()` is called: until then, writes to it
 * stall once the pipes are full.
 */
function stallingReader() {
  const cat = new Deno.Command("cat", { stdin: "piped", stdout: "piped", stderr: "null" }).spawn();
  const pipe = cat.stdin.getWriter();
  let output: Promise<string> | undefined;
  return {
    cat,
    write: async (bytes: Uint8Array) => {
      await pipe.write(bytes);
      return bytes.length;
    },
    resume() {
      output ??= new Response(cat.stdout).text();
    },
    /** Closes the pipe; everything `cat` passed on. */
    async end(): Promise<string> {
      this.resume();
      await pipe.close().catch(() => {});
      await cat.status;
      return await output!;
    },
  };
}

Deno.test("QueuedWriter never waits on a stalled reader, drops past its bound, and says how many where they were dropped", async () => {
  const reader = stallingReader();
  const out = new QueuedWriter({ maxBytes: 256 * 1024, write: reader.write });
  const count = 100_000; // About 700 KB: more than the bound and the pipes hold.
  for (let i = 1; i <= count; i++) out.write(`${i}\n`);
  assert.equal(await out.flush(200), false, "a stalled reader is given up on");
  out.write("after\n");
  reader.resume();
  assert.equal(await out.flush(), true);
  const lines = (await reader.end()).split("\n").slice(0, -1);
  const notice = lines.findIndex((l) => l.startsWith("tyhooks: warn: Dropped output"));
  assert.ok(notice > 0, "the notice is written");
  const numbers = lines.slice(0, notice).map(Number);
  assert.deepEqual(numbers, numbers.map((_, i) => i + 1), "the lines before it, in order");
  const dropped = Number(/dropped_lines=(\d+)/.exec(lines[notice])?.[1]);
  assert.equal(dropped, count - numbers.length);
  assert.ok(numbers.length < count, "some were dropped");
  assert.deepEqual(lines.slice(notice + 1), ["after"]);
});

Deno.test("QueuedWriter stops writing once its reader is gone, and flush() returns at once", async () => {
  const reader = stallingReader();
  const out = new QueuedWriter({ write: reader.write });
  reader.cat.kill("SIGKILL");
  await reader.cat.status;
  for (let i = 0; i < 1000; i++) out.write(`line ${i}\n`);
  const started = performance.now();
  assert.equal(await out.flush(5000), false);
  assert.ok(performance.now() - started < 2500, "not waiting for the idle bound");
  await reader.end();
});

Deno.test("isoTime() writes what toISOString() writes, across leap days, year ends and the epoch", () => {
  const day = 86_400_000;
  const edges = [0, 1, day - 1, day, Date.UTC(2000, 1, 29), Date.UTC(2100, 2, 1) - 1];
  edges.push(Date.UTC(1999, 11, 31, 23, 59, 59, 999), Date.UTC(9999, 11, 31, 23, 59, 59, 999));
  // Every day of four years around a century that is not a leap year, at a changing time of day.
  for (let d = 0; d < 4 * 366; d++) edges.push(Date.UTC(2099, 0, 1) + d * day + d * 997 % day);
  for (const ms of edges) assert.equal(isoTime(ms), new Date(ms).toISOString(), String(ms));
});
