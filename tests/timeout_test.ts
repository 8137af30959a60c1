import assert from "node:assert/strict";
import { clearableTimeout } from "../lib/_timeout.ts";

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
  const order: number[] = [];
  const all = [30, 10, 20].map((ms) => {
    const timeout = clearableTimeout(ms);
    timeout.signal.addEventListener("abort", () => order.push(ms));
    return timeout;
  });
  await Promise.all(all.map((t) => aborted(t.signal)));
  assert.deepEqual(order, [10, 20, 30]);
});

Deno.test("clearableTimeout() no longer keeps the process alive once cleared", async () => {
  const url = new URL("../lib/_timeout.ts", import.meta.url).href;
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
