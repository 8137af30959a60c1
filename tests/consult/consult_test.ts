/**
 * The one consult loop, with handlers simulated in memory (no processes): who is asked when, in
 * which order answers are read, what is terminated, and what the deadline does.
 */

import assert from "node:assert/strict";
import {
  type Answer,
  type AskRequest,
  consult,
  type ConsultHandler,
  type ConsultRunner,
} from "../../lib/consult/consult.ts";
import type { RunResult } from "../../lib/process/run_script.ts";
import { silentLogger } from "../../lib/log.ts";

/** A handler's simulated behaviour: answer `stdout` after `ms`, or never. */
interface Script {
  ms: number | null;
  stdout?: string;
}

function result(script: string, stdout: string, error: string | null = null): RunResult {
  return {
    plugin: null,
    script,
    pid: 1,
    exit_code: error === null ? 0 : null,
    signal: null,
    timed_out: false,
    duration_ms: 0,
    stdout_bytes: stdout.length,
    stderr_bytes: 0,
    stdout_truncated: false,
    stderr_truncated: false,
    error,
    stdout,
    stderr: "",
  };
}

/** A runner whose handlers are scripts in memory; it records what was asked and what was ended. */
function fakeRunner(scripts: Record<string, Script>, signal?: AbortSignal) {
  const started: string[] = [];
  const ended: string[] = [];
  const interrupted: string[] = [];
  const requests: AskRequest[] = [];
  const runner: ConsultRunner = {
    log: silentLogger,
    graceMs: 500,
    signal,
    handlers: () => [],
    timeoutFor: () => 1000,
    ask(request) {
      requests.push(request);
      started.push(request.script);
      const { ms, stdout = "" } = scripts[request.script];
      return new Promise((resolve) => {
        let done = false;
        const finish = (r: RunResult) => {
          if (done) return;
          done = true;
          clearTimeout(timer);
          ended.push(request.script);
          resolve(r);
        };
        // A hung handler runs into its timeout, as runScript's would.
        const timer = setTimeout(
          () =>
            finish(
              ms !== null && ms <= request.timeoutMs
                ? result(request.script, stdout)
                : { ...result(request.script, ""), exit_code: null, timed_out: true },
            ),
          Math.min(ms ?? Infinity, request.timeoutMs),
        );
        // As runScript: an aborted question ends (or never starts) at once.
        const interrupt = () => {
          if (!done) interrupted.push(request.script);
          finish(result(request.script, "", "Interrupted"));
        };
        if (request.signal.aborted) interrupt();
        request.signal.addEventListener("abort", interrupt, { once: true });
      });
    },
  };
  const handlers: ConsultHandler[] = Object.keys(scripts).map((script) => ({
    plugin: null,
    script,
    timeoutMs: 1000,
  }));
  return { runner, handlers, started, ended, interrupted, requests };
}

/** Reads an answer as its stdout, or `!reason` when it did not answer. */
const call = (handlers: ConsultHandler[]) => ({
  event: "test",
  handlers,
  read: (answer: Answer) =>
    answer.ran
      ? answer.result.timed_out ? "timed out" : (answer.result.error ?? answer.result.stdout)
      : `!${answer.reason}`,
  settles: (meaning: string) => meaning.startsWith("yes"),
});

Deno.test("consult() starts every handler at once and reads the answers in order, waiting for an earlier slow one", async () => {
  const { runner, handlers, started } = fakeRunner({
    a: { ms: 150, stdout: "no" },
    b: { ms: 0, stdout: "yes-b" },
  });
  const decided = await consult(runner, call(handlers));
  assert.deepEqual(started, ["a", "b"]);
  assert.deepEqual(decided.map((d) => [d.handler.script, d.meaning]), [["a", "no"], [
    "b",
    "yes-b",
  ]]);
});

Deno.test("consult() keeps an earlier handler's settling answer even when a later one answered first", async () => {
  const { runner, handlers } = fakeRunner({
    a: { ms: 100, stdout: "yes-a" },
    b: { ms: 0, stdout: "yes-b" },
  });
  const decided = await consult(runner, call(handlers));
  assert.deepEqual(decided.map((d) => d.meaning), ["yes-a"]);
});

Deno.test("consult() ends the handlers still running once the outcome is settled, before it returns", async () => {
  const { runner, handlers, ended } = fakeRunner({
    a: { ms: 0, stdout: "yes-a" },
    b: { ms: null },
    c: { ms: null },
  });
  const decided = await consult(runner, call(handlers));
  assert.deepEqual(decided.map((d) => d.meaning), ["yes-a"]);
  assert.deepEqual(ended.sort(), ["a", "b", "c"]);
});

Deno.test("consult() returns once the first handler settles, interrupting a later one that would run for 20 s", async () => {
  const fake = fakeRunner({ a: { ms: 0, stdout: "yes-a" }, b: { ms: null } });
  const handlers = fake.handlers.map((h) => ({ ...h, timeoutMs: 20_000 }));
  const started = performance.now();
  const decided = await consult(fake.runner, call(handlers));
  const elapsed = performance.now() - started;
  assert.deepEqual(decided.map((d) => d.meaning), ["yes-a"]);
  assert.deepEqual(fake.interrupted, ["b"]);
  assert.ok(elapsed < 5000, `returned after ${Math.round(elapsed)} ms`);
});

Deno.test("consult() counts a handler still running at the deadline as not answering, and uses the next one", async () => {
  const { runner, handlers, requests } = fakeRunner({
    a: { ms: null },
    b: { ms: 0, stdout: "yes-b" },
  });
  const decided = await consult(runner, call(handlers), { deadlineMs: 400 });
  assert.deepEqual(decided.map((d) => d.meaning), [
    "!did not answer within the 400 ms deadline (less the 300 ms kept to end it)",
    "yes-b",
  ]);
  // Each handler keeps its own timeout; the grace is the consulted one.
  assert.deepEqual(requests.map((r) => [r.timeoutMs, r.graceMs]), [[1000, 200], [1000, 200]]);
});

Deno.test("consult() with sequential asks one after another and none after the settling one", async () => {
  const { runner, handlers, started } = fakeRunner({
    a: { ms: 20, stdout: "no" },
    b: { ms: 20, stdout: "yes-b" },
    c: { ms: 0, stdout: "yes-c" },
  });
  const decided = await consult(runner, call(handlers), { sequential: true });
  assert.deepEqual(started, ["a", "b"]);
  assert.deepEqual(decided.map((d) => d.meaning), ["no", "yes-b"]);
});

Deno.test("consult() with sequential bounds every handler by what is left of the deadline, and asks none once it is spent", async () => {
  const { runner, handlers, started, requests } = fakeRunner({
    a: { ms: null },
    b: { ms: 0, stdout: "yes-b" },
  });
  const decided = await consult(runner, call(handlers), { sequential: true, deadlineMs: 500 });
  assert.deepEqual(started, ["a"]);
  assert.ok(requests[0].timeoutMs <= 500 - 200 - 100, `timeout ${requests[0].timeoutMs}`);
  assert.deepEqual(decided.map((d) => d.meaning), [
    "timed out",
    "!not asked: the 500 ms deadline was spent",
  ]);
});

Deno.test("consult() ends every handler when tyhooks shuts down", async () => {
  const shutdown = new AbortController();
  const { runner, handlers, ended } = fakeRunner(
    { a: { ms: null }, b: { ms: null } },
    shutdown.signal,
  );
  setTimeout(() => shutdown.abort(), 50);
  const decided = await consult(runner, call(handlers));
  assert.deepEqual(decided.map((d) => d.meaning), ["Interrupted", "Interrupted"]);
  assert.deepEqual(ended.sort(), ["a", "b"]);
});

Deno.test("consult() with no handler asks nobody", async () => {
  const { runner } = fakeRunner({});
  assert.deepEqual(await consult(runner, call([])), []);
});

Deno.test("consult() starts nothing when tyhooks is already shutting down", async () => {
  const shutdown = new AbortController();
  shutdown.abort();
  const { runner, handlers, requests } = fakeRunner(
    { a: { ms: 0, stdout: "yes-a" } },
    shutdown.signal,
  );
  const decided = await consult(runner, call(handlers));
  assert.ok(requests.every((r) => r.signal.aborted), "every question was asked already aborted");
  assert.deepEqual(decided.map((d) => d.meaning), ["Interrupted"]);
});

Deno.test("consult() with sequential asks the first handler even under a tiny deadline", async () => {
  const { runner, handlers, started } = fakeRunner({
    a: { ms: 0, stdout: "no" },
    b: { ms: 0, stdout: "yes-b" },
  });
  const decided = await consult(runner, call(handlers), { sequential: true, deadlineMs: 10 });
  assert.deepEqual(started, ["a"]);
  assert.deepEqual(decided.map((d) => d.meaning), [
    "no",
    "!not asked: the 10 ms deadline was spent",
  ]);
});
