import assert from "node:assert/strict";
import { join } from "node:path";
import { spawnDetached } from "../../lib/process/detach.ts";

async function waitForText(path: string, text: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const content = await Deno.readTextFile(path).catch(() => "");
    if (content.includes(text)) return content;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`"${text}" never reached ${path}`);
}

Deno.test("spawnDetached() appends the background run's output to the log", async () => {
  const log = join(await Deno.makeTempDir(), "sub", "detached.log");
  spawnDetached(["sh", "-c", "echo first"], log);
  await waitForText(log, "first\n");
  spawnDetached(["sh", "-c", "echo second"], log);
  assert.equal(await waitForText(log, "second\n"), "first\nsecond\n");
});

Deno.test("spawnDetached() moves a full log to .1 and starts a fresh one, keeping two files", async () => {
  const log = join(await Deno.makeTempDir(), "detached.log");
  await Deno.writeTextFile(log, "x".repeat(100));
  await Deno.writeTextFile(`${log}.1`, "oldest\n");
  spawnDetached(["sh", "-c", "echo new"], log, { maxLogBytes: 64 });
  assert.equal(await waitForText(log, "new\n"), "new\n");
  assert.equal(await Deno.readTextFile(`${log}.1`), "x".repeat(100));
  // Under the limit: appended to, not rotated.
  spawnDetached(["sh", "-c", "echo more"], log, { maxLogBytes: 64 });
  assert.equal(await waitForText(log, "more\n"), "new\nmore\n");
});
