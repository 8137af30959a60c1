import assert from "node:assert/strict";
import { join } from "node:path";
import { startServices } from "../../lib/services/service_set.ts";
import { alive, fileLines, groupGone, readPid, until, waitGone } from "../_procs.ts";
import { recordingLogger, serviceIndex } from "../_index.ts";

const FAST = { initialMs: 10, maxMs: 40, resetAfterMs: 10_000, maxFailures: 5 };
/** A service that fails at once, leaving a line in `starts` per start. */
const CRASH = { name: "crash", command: "echo x >> starts; exit 1" };

Deno.test("startServices() runs sh -c in its own group from its cwd, with the layered env", async () => {
  const { index, dir } = await serviceIndex([{
    name: "web",
    command: 'echo "$$" > pid; pwd > cwd.txt; env > env.txt; exec sleep 300',
    cwd: "",
    env: ["FOO=bar", "SHARED=own"],
  }]);
  index.plugins[0].services[0].cwd = join(dir, "sub");
  await Deno.mkdir(join(dir, "sub"));
  const set = startServices(index, {
    env: { TY_API_URL: "http://127.0.0.1:7777", SHARED: "injected" },
  });
  try {
    const pid = await readPid(join(dir, "sub", "pid"));
    assert.equal(set.status()[0].pid, pid);
    const stat = await Deno.readTextFile(`/proc/${pid}/stat`);
    assert.equal(Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[2]), pid, "own group");
    assert.ok(await until(async () => (await fileLines(join(dir, "sub", "env.txt"))).length > 0));
    const env = await fileLines(join(dir, "sub", "env.txt"));
    assert.ok(env.includes("TY_API_URL=http://127.0.0.1:7777"));
    assert.ok(env.includes("FOO=bar"));
    assert.ok(env.includes("SHARED=own"));
    assert.ok(env.some((l) => l.startsWith("PATH=")), "the parent env is inherited");
    assert.deepEqual(await fileLines(join(dir, "sub", "cwd.txt")), [join(dir, "sub")]);
  } finally {
    await set.stop({ stopTimeoutMs: 1000 });
  }
  const [status] = set.status();
  assert.equal(status.state, "stopped");
  assert.equal(status.pid, null);
  assert.equal(status.last_exit?.signal, "SIGTERM");
});

Deno.test("a service's output lines reach the sink one by one, the partial last line included", async () => {
  const { index } = await serviceIndex([{
    name: "talk",
    command: "echo one; echo two >&2; printf 'no newline'",
    restart: "never",
  }], "chat");
  const got: string[] = [];
  const set = startServices(index, {
    output: (line, from) => got.push(`[${from.plugin}/${from.service}] ${line}`),
  });
  await until(() => set.status()[0].state === "stopped");
  await set.stop();
  assert.deepEqual(got.toSorted(), [
    "[chat/talk] no newline",
    "[chat/talk] one",
    "[chat/talk] two",
  ]);
});

Deno.test("a service becomes running after runningAfterMs and logs its start with its name", async () => {
  const { index } = await serviceIndex([{ name: "idle", command: "exec sleep 300" }]);
  const logger = recordingLogger();
  const set = startServices(index, { log: logger.log, runningAfterMs: 100 });
  try {
    assert.equal(set.status()[0].state, "starting");
    assert.ok(await until(() => set.status()[0].state === "running", 2000));
    assert.ok(logger.lines.some((l) => l.message === 'Started service "svc/idle"'));
  } finally {
    await set.stop({ stopTimeoutMs: 1000 });
  }
  const { ServicesStatusSchema } = await import("../../lib/wire/services.ts");
  assert.ok(ServicesStatusSchema.safeParse({ services: set.status() }).success);
});

Deno.test("a service that keeps failing is given up after 5 quick failures while the others keep running", async () => {
  const { index, dir } = await serviceIndex([
    CRASH,
    { name: "steady", command: 'echo "$$" > steady.pid; exec sleep 300' },
  ]);
  const logger = recordingLogger();
  const set = startServices(index, { log: logger.log, backoff: FAST, runningAfterMs: 50 });
  try {
    assert.ok(await until(() => set.status()[0].state === "given_up"));
    const [crash, steady] = set.status();
    assert.equal((await fileLines(join(dir, "starts"))).length, 5);
    assert.equal(crash.restarts, 4);
    assert.deepEqual(crash.last_exit && [crash.last_exit.code, crash.last_exit.signal], [1, null]);
    assert.equal(crash.pid, null);
    const giveUp = logger.lines.find((l) => l.level === "error");
    assert.match(giveUp?.message ?? "", /^Giving up on service "svc\/crash": it failed 5 times/);
    assert.equal(
      logger.lines.filter((l) => l.message === 'Service "svc/crash" exited 1').length,
      5,
    );
    assert.equal(
      logger.lines.filter((l) => /^Restarting service "svc\/crash"/.test(l.message)).length,
      4,
    );
    assert.ok(await until(() => set.status()[1].state === "running"));
    assert.ok(alive(await readPid(join(dir, "steady.pid"))));
    assert.equal(steady.restarts, 0);
  } finally {
    await set.stop({ stopTimeoutMs: 1000 });
  }
  assert.equal(set.status()[0].state, "given_up", "stop leaves a given-up service given up");
});

Deno.test("on-failure leaves a clean exit stopped, never leaves a failure stopped", async () => {
  const { index } = await serviceIndex([
    { name: "clean", command: "exit 0", restart: "on-failure" },
    { name: "once", command: "exit 3", restart: "never" },
  ]);
  const set = startServices(index, { backoff: FAST });
  assert.ok(await until(() => set.status().every((s) => s.state === "stopped")));
  await new Promise((r) => setTimeout(r, 100)); // A restart would be due by now.
  await set.stop();
  const [clean, once] = set.status();
  assert.deepEqual([clean.restarts, clean.last_exit?.code], [0, 0]);
  assert.deepEqual([once.restarts, once.last_exit?.code], [0, 3]);
});

Deno.test("always restarts a clean exit too, backing off but never giving up", async () => {
  const { index, dir } = await serviceIndex([
    { name: "job", command: "echo x >> runs; exit 0", restart: "always" },
  ]);
  const set = startServices(index, { backoff: { ...FAST, maxMs: 10 } });
  try {
    assert.ok(await until(async () => (await fileLines(join(dir, "runs"))).length >= 8));
    assert.notEqual(set.status()[0].state, "given_up");
  } finally {
    await set.stop();
  }
});

Deno.test("stop() cancels a pending restart and returns at once", async () => {
  const { index, dir } = await serviceIndex([CRASH]);
  const set = startServices(index, { backoff: { ...FAST, initialMs: 60_000 } });
  assert.ok(await until(() => set.status()[0].state === "backoff"));
  const started = performance.now();
  await set.stop();
  assert.ok(performance.now() - started < 1000, "stop did not wait for the backoff timer");
  assert.equal(set.status()[0].state, "stopped");
  assert.equal((await fileLines(join(dir, "starts"))).length, 1);
});

Deno.test("stop() SIGKILLs a service that ignores SIGTERM within the stop timeout + 1 s", async () => {
  const { index, dir } = await serviceIndex([{
    name: "stubborn",
    command: "trap '' TERM; echo \"$$\" > pid; while :; do sleep 0.05; done",
  }]);
  const set = startServices(index);
  const pid = await readPid(join(dir, "pid"));
  const started = performance.now();
  await set.stop({ stopTimeoutMs: 500 });
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 1500, `stopped after ${Math.round(elapsed)} ms`);
  assert.ok(!alive(pid));
  assert.ok(groupGone(pid));
  assert.equal(set.status()[0].last_exit?.signal, "SIGKILL");
});

Deno.test("stop() leaves no background child of a service behind", async () => {
  const { index, dir } = await serviceIndex([{
    name: "forker",
    command: "sleep 300 & echo $! > a.pid; (trap '' TERM; sleep 300) & echo $! > b.pid; " +
      'echo "$$" > pid; wait',
  }]);
  const set = startServices(index);
  const pids = [await readPid(join(dir, "pid")), await readPid(join(dir, "a.pid"))];
  pids.push(await readPid(join(dir, "b.pid")));
  await set.stop({ stopTimeoutMs: 300 });
  for (const pid of pids) assert.ok(!alive(pid), `pid ${pid} survived`);
  assert.ok(groupGone(pids[0]));
});

Deno.test("what an exited service left in its group is terminated before any restart", async () => {
  const { index, dir } = await serviceIndex([{
    name: "leaver",
    command: "sleep 300 & echo $! > child.pid; exit 0",
    restart: "never",
  }]);
  const set = startServices(index);
  const child = await readPid(join(dir, "child.pid"));
  assert.ok(await waitGone(child, 2000), "the leftover child was terminated");
  await set.stop();
});

Deno.test("a service that cannot start is logged, retried and given up, never thrown", async () => {
  const { index, dir } = await serviceIndex([{ name: "lost", command: "true" }]);
  index.plugins[0].services[0].cwd = join(dir, "missing");
  const logger = recordingLogger();
  const set = startServices(index, { log: logger.log, backoff: FAST });
  try {
    assert.ok(await until(() => set.status()[0].state === "given_up"));
    const { last_exit } = set.status()[0];
    assert.match(last_exit?.error ?? "", /^Cannot start service "svc\/lost": /);
    assert.ok(
      logger.lines.some((l) => l.level === "error" && l.message.startsWith("Cannot start")),
    );
  } finally {
    await set.stop();
  }
});

Deno.test("a logger that throws does not stop supervision", async () => {
  const { index, dir } = await serviceIndex([CRASH]);
  const log = {
    log() {
      throw new Error("logger broke");
    },
  };
  const set = startServices(index, { log, backoff: FAST });
  try {
    assert.ok(await until(() => set.status()[0].state === "given_up"));
    assert.equal((await fileLines(join(dir, "starts"))).length, 5);
  } finally {
    await set.stop();
  }
});

// SPEC's own timings, not injected ones: this is the "Done when" of the services issue.
Deno.test("a service that exits 1 at once is started 3 times in its first ~4 s, 1 s then 2 s apart", async () => {
  const { index, dir } = await serviceIndex([{
    name: "crash",
    command: "date +%s%N >> starts; exit 1",
  }]);
  const set = startServices(index);
  try {
    await new Promise((r) => setTimeout(r, 4500));
  } finally {
    await set.stop({ stopTimeoutMs: 1000 });
  }
  const starts = (await fileLines(join(dir, "starts"))).map((ns) =>
    Number(BigInt(ns) / 1_000_000n)
  );
  assert.equal(starts.length, 3, `starts at ${starts.map((t) => t - starts[0])} ms`);
  const gaps = [starts[1] - starts[0], starts[2] - starts[1]];
  // Generous bounds: the spec'd delays are 1000 and 2000 ms, plus a spawn and an exit each.
  assert.ok(gaps[0] >= 900 && gaps[0] < 1700, `first gap ${gaps[0]} ms`);
  assert.ok(gaps[1] >= 1900 && gaps[1] < 2700, `second gap ${gaps[1]} ms`);
  const [status] = set.status();
  assert.deepEqual([status.state, status.restarts], ["stopped", 2]);
});
