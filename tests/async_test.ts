import assert from "node:assert/strict";
import { clearableTimeout, sleep, within } from "../lib/async.ts";

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
}

Deno.test("clearableTimeout() aborts its signal with a TimeoutError when the time is up", async () => {
  const timeout = clearableTimeout(5);
  await aborted(timeout.signal);
  assert.equal(timeout.signal.reason.name, "TimeoutError");
});

Deno.test("clearableTimeout() started later but due sooner fires first; a cleared one never", async () => {
  const later = clearableTimeout(60_000);
  const cleared = clearableTimeout(1);
  cleared.clear();
  const sooner = clearableTimeout(20);
  await aborted(sooner.signal);
  // Past the cleared one's time too: it was forgotten, and the long one is still running.
  assert.equal(cleared.signal.aborted, false);
  assert.equal(later.signal.aborted, false);
  later.clear();
});

Deno.test("clearableTimeout() keeps firing in due order as timeouts come and go", async () => {
  // Also when the event loop is late and all three are due at once (a busy machine).
  for (const lateMs of [0, 50]) {
    // Each one's due time lies between its start's before and after, plus its length: a stall
    // there (a loaded machine) can reorder them, so the order is checked against those bounds.
    const fired: { due: [number, number]; ms: number }[] = [];
    const all = [30, 10, 20].map((ms) => {
      const before = performance.now();
      const timeout = clearableTimeout(ms);
      const one = { due: [before + ms, performance.now() + ms] as [number, number], ms };
      timeout.signal.addEventListener("abort", () => fired.push(one));
      return timeout;
    });
    const busyUntil = performance.now() + lateMs;
    while (performance.now() < busyUntil) {
      // Holds the event loop.
    }
    await Promise.all(all.map((t) => aborted(t.signal)));
    assert.equal(fired.length, 3);
    for (let i = 1; i < fired.length; i++) {
      // Each fired no later than the next could have been due.
      assert.ok(
        fired[i - 1].due[0] <= fired[i].due[1],
        `event loop ${lateMs} ms late: ${fired.map((f) => f.ms)} is not in due order`,
      );
    }
  }
});

Deno.test("clearableTimeout() no longer keeps the process alive once cleared", async () => {
  const url = new URL("../lib/async.ts", import.meta.url).href;
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { clearableTimeout } from "${url}"; const a = clearableTimeout(600_000); const b = clearableTimeout(1000); a.clear(); b.clear();`,
    ],
    stdout: "null",
    stderr: "piped",
    signal: AbortSignal.timeout(30_000),
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
});

Deno.test("clearableTimeout() refuses a bad length and leaves the other timeouts running", async () => {
  const running = clearableTimeout(10);
  assert.throws(() => clearableTimeout(NaN), RangeError);
  assert.throws(() => clearableTimeout(-1), RangeError);
  assert.throws(() => clearableTimeout(Infinity), RangeError);
  await aborted(running.signal);
});

Deno.test("clearableTimeout() longer than a timer can wait is not fired early", async () => {
  // 2^31 ms and more overflows a timer, which then fires at once.
  const month = clearableTimeout(30 * 24 * 3600 * 1000);
  const soon = clearableTimeout(20);
  await aborted(soon.signal);
  await sleep(20);
  assert.equal(month.signal.aborted, false);
  month.clear();
});

Deno.test("clearableTimeout() started in another's abort listener waits its own time", async () => {
  const first = clearableTimeout(5);
  let inner: ReturnType<typeof clearableTimeout> | undefined;
  first.signal.addEventListener("abort", () => inner = clearableTimeout(0.5));
  await aborted(first.signal);
  assert.equal(inner?.signal.aborted, false);
  await aborted(inner!.signal);
});

Deno.test("sleep() waits its time, or returns false at once when its signal aborts", async () => {
  assert.equal(await sleep(1), true);
  const stop = new AbortController();
  const waiting = sleep(60_000, stop.signal);
  stop.abort();
  assert.equal(await waiting, false);
});

Deno.test("within() tells whether a promise settled in time", async () => {
  assert.equal(await within(Promise.resolve(), 1000), true);
  assert.equal(await within(Promise.reject(new Error("x")), 1000), true);
  assert.equal(await within(new Promise(() => {}), 5), false);
});
