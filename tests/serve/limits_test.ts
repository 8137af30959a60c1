import assert from "node:assert/strict";
import { EventQueue, ProcLimit } from "../../lib/serve/limits.ts";
import { RunError } from "../../lib/errors.ts";
import { createLogger } from "../../lib/log.ts";

/** A run that ends when told to, recording that it started. */
function blocker(started: string[], name: string) {
  const { promise, resolve } = Promise.withResolvers<void>();
  return {
    run: () => {
      started.push(name);
      return promise;
    },
    end: resolve,
  };
}

const tick = () => new Promise((r) => setTimeout(r, 0));

Deno.test("ProcLimit never runs more than max at once, across both gates", async () => {
  const limit = new ProcLimit(3);
  let now = 0;
  let peak = 0;
  const work = async () => {
    peak = Math.max(peak, ++now);
    await new Promise((r) => setTimeout(r, 5));
    now--;
  };
  await Promise.all(
    Array.from({ length: 30 }, (_, i) => (i % 2 ? limit.event(work) : limit.consulted(work))),
  );
  assert.equal(peak, 3);
  assert.equal(limit.running, 0);
});

Deno.test("ProcLimit gives a freed slot to a waiting consulted call before queued events", async () => {
  const limit = new ProcLimit(2, { reserved: 0 });
  const started: string[] = [];
  const first = blocker(started, "e1");
  const second = blocker(started, "e2");
  const runs = [limit.event(first.run), limit.event(second.run)];
  const queued = ["e3", "e4", "e5"].map((n) => blocker(started, n));
  runs.push(...queued.map((b) => limit.event(b.run)));
  await tick();
  const consulted = blocker(started, "c1");
  runs.push(limit.consulted(consulted.run));
  await tick();
  assert.deepEqual(started, ["e1", "e2"]);
  first.end();
  await tick();
  assert.deepEqual(started, ["e1", "e2", "c1"]);
  for (const b of [second, consulted, ...queued]) b.end();
  await Promise.all(runs);
});

Deno.test("ProcLimit keeps reserved slots free of events, so a consulted call starts at once", async () => {
  const limit = new ProcLimit(4, { reserved: 1 });
  const started: string[] = [];
  const events = ["e1", "e2", "e3", "e4", "e5"].map((n) => blocker(started, n));
  const runs = events.map((b) => limit.event(b.run));
  await tick();
  assert.deepEqual(started, ["e1", "e2", "e3"]);
  const consulted = blocker(started, "c1");
  runs.push(limit.consulted(consulted.run));
  await tick();
  assert.deepEqual(started, ["e1", "e2", "e3", "c1"]);
  for (const b of [...events, consulted]) b.end();
  await Promise.all(runs);
  assert.equal(limit.running, 0);
});

Deno.test("ProcLimit frees the slot when a run throws", async () => {
  const limit = new ProcLimit(1);
  await assert.rejects(limit.consulted(() => Promise.reject(new Error("boom"))), /boom/);
  assert.equal(await limit.event(() => Promise.resolve("next")), "next");
  assert.equal(limit.running, 0);
});

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
