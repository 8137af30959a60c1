import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { DRAIN_MS, MAX_ENV_VALUE_BYTES, runScript } from "../../lib/process/run_script.ts";
import { alive, fixture, groupGone, pidFile, readPid } from "../_procs.ts";

async function tempDir(): Promise<string> {
  return await Deno.makeTempDir({ prefix: "tyhooks-mode-" });
}

Deno.test("runScript() in notify mode lasts until a background job holding its pipe has finished", async () => {
  const dir = await tempDir();
  try {
    const done = join(dir, "done");
    const r = await runScript("sh", {
      args: ["-c", 'echo start; ( sleep 0.5; echo late; echo done > "$DONE" ) & exit 0'],
      env: { DONE: done },
      mode: "notify",
      timeoutMs: 10_000,
    });
    assert.deepEqual([r.exit_code, r.timed_out, r.stdout], [0, false, "start\nlate\n"]);
    assert.equal(await Deno.readTextFile(done), "done\n");
    assert(groupGone(r.pid!));
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runScript() in notify mode lasts until a background job with no pipe has finished", async () => {
  const dir = await tempDir();
  try {
    const done = join(dir, "done");
    const r = await runScript("sh", {
      args: ["-c", '( sleep 0.5; echo done > "$DONE" ) >/dev/null 2>&1 </dev/null & exit 0'],
      env: { DONE: done },
      mode: "notify",
      timeoutMs: 10_000,
    });
    assert.deepEqual([r.exit_code, r.timed_out], [0, false]);
    assert.equal(await Deno.readTextFile(done), "done\n");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("runScript() in notify mode ends a background job at the timeout, within timeout + grace + 100 ms", async () => {
  const path = await pidFile();
  const timeoutMs = 500;
  const graceMs = 300;
  const started = performance.now();
  const r = await runScript("sh", {
    args: ["-c", 'sleep 60 >/dev/null 2>&1 & echo $! > "$PID_FILE"; exit 0'],
    env: { PID_FILE: path },
    mode: "notify",
    timeoutMs,
    graceMs,
  });
  const elapsed = performance.now() - started;
  // The script itself exited 0; its background job is what the timeout ended.
  assert.deepEqual([r.exit_code, r.timed_out], [0, true]);
  assert(!alive(await readPid(path)), "the background job is dead when the call returns");
  assert(groupGone(r.pid!));
  assert(elapsed < timeoutMs + graceMs + DRAIN_MS, `returned after ${elapsed} ms`);
  await Deno.remove(dirname(path), { recursive: true });
});

Deno.test("runScript() in notify mode does not wait for a pipe held by a setsid escapee", async () => {
  const path = await pidFile();
  const started = performance.now();
  const r = await runScript(fixture("setsid_escape.sh"), {
    env: { PID_FILE: path },
    mode: "notify",
    timeoutMs: 5000,
  });
  const elapsed = performance.now() - started;
  assert.deepEqual([r.exit_code, r.stdout, r.timed_out], [0, "answer\n", false]);
  // The escapee holds stdout for 3 s: the call must not wait for it (a bound, not a timing).
  assert(elapsed < 2500, `returned after ${elapsed} ms`);
  Deno.kill(await readPid(path), "SIGKILL");
  await Deno.remove(dirname(path), { recursive: true });
});

Deno.test("runScript() in consult mode (the default) ends a background job as soon as the script exits", async () => {
  const path = await pidFile();
  const r = await runScript("sh", {
    args: ["-c", 'sleep 60 >/dev/null 2>&1 & echo $! > "$PID_FILE"; echo answer'],
    env: { PID_FILE: path },
    timeoutMs: 30_000,
  });
  assert.deepEqual([r.exit_code, r.timed_out, r.stdout], [0, false, "answer\n"]);
  assert(!alive(await readPid(path)));
  await Deno.remove(dirname(path), { recursive: true });
});

Deno.test("runScript() cuts an environment value over 64 KiB to 64 KiB, never splitting a character", async () => {
  // 1 + 2 x 100,000 bytes: far over Linux's 128 KiB per string, which would make exec fail.
  const r = await runScript("sh", {
    args: ["-c", 'printf %s "$BIG" | wc -c; printf %s "$SMALL"'],
    env: { BIG: "a" + "é".repeat(100_000), SMALL: "kept" },
  });
  assert.equal(r.error, null);
  // 65,536 would split the last "é": the cut stops one byte short.
  assert.deepEqual(r.stdout.split("\n").map((l) => l.trim()), [
    String(MAX_ENV_VALUE_BYTES - 1),
    "kept",
  ]);
});
