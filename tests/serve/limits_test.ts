import assert from "node:assert/strict";
import { EventQueue, ProcLimit } from "../../lib/serve/limits.ts";
import { RunError } from "../../lib/errors.ts";

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

Deno.test("EventQueue.close() leaves waiting jobs unrun, waits for running ones, refuses new ones", async () => {
  const queue = new EventQueue({ maxActive: 1 });
  const gate = Promise.withResolvers<void>();
  let finished = false;
  let waitingRan = false;
  const running = queue.submit("run", async () => {
    await gate.promise;
    finished = true;
  })!;
  const waiting = queue.submit("wait", () => Promise.resolve(waitingRan = true))!;
  const closed = queue.close();
  assert.equal(closed.left, 1);
  await assert.rejects(waiting, (e: Error) => e instanceof RunError && /stopping/.test(e.message));
  assert.equal(queue.submit("late", () => Promise.resolve()), null);
  gate.resolve();
  await closed.settled;
  await running;
  assert.ok(finished);
  assert.equal(waitingRan, false);
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

Deno.test("EventQueue starts a job no sooner than its notBefore, and one without at once", async () => {
  const queue = new EventQueue();
  const submitted = performance.now();
  const notBefore = submitted + 60;
  let lateStart = 0;
  let soonStart = 0;
  const late = queue.submit("late", () => Promise.resolve(lateStart = performance.now()), {
    notBefore,
  });
  const soon = queue.submit("soon", () => Promise.resolve(soonStart = performance.now()));
  await Promise.all([late, soon]);
  // Timers count whole milliseconds, on a clock of their own.
  assert.ok(lateStart >= notBefore - 1, `started ${(notBefore - lateStart).toFixed(1)} ms early`);
  // Order alone, no clock: the job queued after the held one was not held behind it.
  assert.ok(soonStart < lateStart);
});
