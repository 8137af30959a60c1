import assert from "node:assert/strict";
import { DEFAULT_BACKOFF, nextStep, NO_STREAK, type Step } from "../../lib/services/backoff.ts";

const quickFailure = { failed: true, uptimeMs: 50 };

function run(policy: "always" | "on-failure", ends: { failed: boolean; uptimeMs: number }[]) {
  const steps: Step[] = [];
  let streak = NO_STREAK;
  for (const end of ends) {
    const step = nextStep(policy, end, streak);
    steps.push(step);
    streak = step.streak;
  }
  return steps;
}

Deno.test("nextStep() doubles the delay from 1 s per quick failure and gives up at the fifth", () => {
  const steps = run("on-failure", Array(5).fill(quickFailure));
  assert.deepEqual(
    steps.map((s) => s.kind === "restart" ? s.delayMs : s.kind),
    [1000, 2000, 4000, 8000, "give_up"],
  );
});

Deno.test("nextStep() caps the delay at 30 s for quick clean exits under always, and never gives up", () => {
  const steps = run("always", Array(12).fill({ failed: false, uptimeMs: 5 }));
  assert.ok(steps.every((s) => s.kind === "restart"));
  assert.deepEqual(steps.map((s) => s.kind === "restart" && s.delayMs).slice(4, 8), [
    16_000,
    30_000,
    30_000,
    30_000,
  ]);
});

Deno.test("nextStep() starts over from 1 s after a run of 10 s or more", () => {
  const steps = run("on-failure", [
    quickFailure,
    quickFailure,
    quickFailure,
    { failed: true, uptimeMs: DEFAULT_BACKOFF.resetAfterMs },
    quickFailure,
    quickFailure,
    quickFailure,
    quickFailure,
  ]);
  assert.deepEqual(
    steps.map((s) => s.kind === "restart" ? s.delayMs : s.kind),
    [1000, 2000, 4000, 1000, 2000, 4000, 8000, "give_up"],
  );
});

Deno.test("nextStep() counts only consecutive failures toward giving up", () => {
  const clean = { failed: false, uptimeMs: 5 };
  const four = Array(4).fill(quickFailure);
  const steps = run("always", [...four, clean, ...four]);
  assert.ok(steps.every((s) => s.kind === "restart"));
  assert.equal(run("always", [...four, ...four]).at(-4)?.kind, "give_up");
});

Deno.test("nextStep() leaves a cleanly exited on-failure service and any never service stopped", () => {
  assert.equal(nextStep("on-failure", { failed: false, uptimeMs: 5 }, NO_STREAK).kind, "stop");
  assert.equal(nextStep("never", quickFailure, NO_STREAK).kind, "stop");
  assert.equal(nextStep("always", { failed: false, uptimeMs: 5 }, NO_STREAK).kind, "restart");
});

Deno.test("nextStep() uses the timings it is given", () => {
  const options = { initialMs: 10, maxMs: 25, resetAfterMs: 100, maxFailures: 2 };
  const first = nextStep("on-failure", quickFailure, NO_STREAK, options);
  assert.deepEqual(first, {
    kind: "restart",
    delayMs: 10,
    streak: { quickExits: 1, quickFailures: 1 },
  });
  assert.equal(nextStep("on-failure", quickFailure, first.streak, options).kind, "give_up");
});
