import assert from "node:assert/strict";
import { EventQueue } from "../../lib/serve/event_queue.ts";
import { RunError } from "../../lib/errors.ts";
import { createLogger } from "../../lib/log.ts";

Deno.test("EventQueue drops jobs past its bound and counts them in the log", async () => {
  const lines: string[] = [];
  const log = createLogger({ format: "json", write: (l) => lines.push(l) });
  const queue = new EventQueue({ maxPending: 2, maxActive: 1, log });
  const gate = Promise.withResolvers<void>();
  const ran: string[] = [];
  const job = (name: string) => async () => {
    await gate.promise;
    ran.push(name);
  };
  const accepted = ["a", "b", "c"].map((n) => queue.submit(n, job(n)));
  assert.ok(accepted.every((p) => p !== null));
  assert.equal(queue.submit("d", job("d")), null);
  assert.equal(queue.submit("e", job("e")), null);
  assert.equal(queue.dropped, 2);
  const first = JSON.parse(lines[0]);
  assert.equal(first.msg, 'Event queue full: dropped "d"');
  assert.equal(first.dropped_total, 1);
  gate.resolve();
  await Promise.all(accepted);
  assert.deepEqual(ran, ["a", "b", "c"]);
  await queue.close();
  // The second drop fell inside the one-line-a-second window: close() reports the total.
  assert.equal(JSON.parse(lines.at(-1)!).dropped_total, 2);
});

Deno.test("EventQueue runs at most maxActive jobs at once, in order", async () => {
  const queue = new EventQueue({ maxActive: 2 });
  let now = 0;
  let peak = 0;
  const order: number[] = [];
  const jobs = Array.from({ length: 10 }, (_, i) =>
    queue.submit(String(i), async () => {
      peak = Math.max(peak, ++now);
      order.push(i);
      await new Promise((r) => setTimeout(r, 5));
      now--;
    }));
  await Promise.all(jobs);
  assert.equal(peak, 2);
  assert.deepEqual(order, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
});

Deno.test("EventQueue.close() drops waiting jobs, waits for running ones, refuses new ones", async () => {
  const queue = new EventQueue({ maxActive: 1 });
  const gate = Promise.withResolvers<void>();
  let finished = false;
  const running = queue.submit("run", async () => {
    await gate.promise;
    finished = true;
  })!;
  const waiting = queue.submit("wait", () => Promise.resolve())!;
  const closed = queue.close();
  await assert.rejects(waiting, (e: Error) => e instanceof RunError && /stopping/.test(e.message));
  assert.equal(queue.submit("late", () => Promise.resolve()), null);
  gate.resolve();
  await closed;
  await running;
  assert.ok(finished);
});

Deno.test("EventQueue passes a job's failure to its submitter", async () => {
  const queue = new EventQueue();
  await assert.rejects(queue.submit("x", () => Promise.reject(new Error("boom")))!, /boom/);
  await assert.rejects(
    queue.submit("y", () => {
      throw new Error("sync boom");
    })!,
    /sync boom/,
  );
});

Deno.test("EventQueue drops a job that would take its bytes past maxBytes, counting running ones", async () => {
  const queue = new EventQueue({ maxPending: 100, maxBytes: 1000, maxActive: 1 });
  const release = Promise.withResolvers<void>();
  const first = queue.submit("a", () => release.promise, 600);
  assert.ok(first !== null);
  assert.equal(queue.submit("b", () => Promise.resolve(), 500), null);
  const third = queue.submit("c", () => Promise.resolve(), 400);
  assert.ok(third !== null);
  assert.equal(queue.size.bytes, 1000);
  assert.equal(queue.dropped, 1);
  release.resolve();
  await Promise.all([first, third]);
  assert.equal(queue.size.bytes, 0);
  assert.ok(queue.submit("d", () => Promise.resolve(), 1000) !== null);
  await queue.close();
});
