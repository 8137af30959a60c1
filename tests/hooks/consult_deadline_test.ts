import assert from "node:assert/strict";
import {
  CONSULT_GRACE_MS,
  MIN_HANDLER_MS,
  startDeadline,
} from "../../lib/hooks/consult_deadline.ts";
import { DRAIN_MS } from "../../lib/process/run_script.ts";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

Deno.test("startDeadline() leaves room to kill the handler before the deadline", () => {
  const budget = startDeadline(5000).next(5000, 500);
  assert.ok(budget !== null);
  assert.equal(budget.graceMs, CONSULT_GRACE_MS);
  assert.ok(budget.timeoutMs <= 5000 - CONSULT_GRACE_MS - DRAIN_MS);
  assert.ok(budget.timeoutMs > 4000);
});

Deno.test("startDeadline() gives a handler its own timeout when it is the smaller, and keeps a shorter grace", () => {
  assert.deepEqual(startDeadline(60_000).next(2000, 100), { timeoutMs: 2000, graceMs: 100 });
});

Deno.test("startDeadline() always asks the first handler, even under a tiny deadline", () => {
  const deadline = startDeadline(10);
  assert.deepEqual(deadline.next(5000, 500), { timeoutMs: MIN_HANDLER_MS, graceMs: 200 });
});

Deno.test("startDeadline() asks no later handler once the deadline is spent", async () => {
  const deadline = startDeadline(400);
  assert.ok(deadline.next(5000, 500) !== null);
  await sleep(100);
  assert.equal(deadline.next(5000, 500), null);
});
