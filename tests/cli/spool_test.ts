import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, spawnCli, tempDir } from "../_cli.ts";
import { waitGone } from "../_procs.ts";
import { serveFailure, serveOn, tempSocket } from "./_serve.ts";

// SPEC "Daemon": nothing accepted is lost; "Command line": spool [list|run].

/**
 * A plugins dir whose task.done hook logs `start ID` and `end ID` around a sleep of `seconds`,
 * and a state home for the spool (kept across daemon restarts).
 */
async function setup(seconds: number): Promise<{ plugins: string; state: string; log: string }> {
  const plugins = await makeTree({
    "n/plugin.yaml": "name: n\nhooks:\n  task.done: done.sh\n",
    "n/done.sh": '#!/bin/sh\necho $$ > "$TASK_PLUGIN_DIR/pid.$TASK_ID"\n' +
      `echo "start $TASK_ID" >> "$TASK_PLUGIN_DIR/log"\nsleep ${seconds}\n` +
      'echo "end $TASK_ID" >> "$TASK_PLUGIN_DIR/log"\n',
  });
  const state = await tempDir({ prefix: "tyhooks-state-" });
  return { plugins, state, log: join(plugins, "n", "log") };
}

async function lines(log: string): Promise<string[]> {
  return (await Deno.readTextFile(log).catch(() => "")).split("\n").filter((l) => l !== "");
}

/** The task ids whose hook logged `end`, waiting up to `ms` for `count` of them. */
async function ended(log: string, count = 0, ms = 30_000): Promise<Set<string>> {
  const deadline = Date.now() + ms;
  while (true) {
    const all = await lines(log);
    const done = new Set(all.filter((l) => l.startsWith("end ")).map((l) => l.slice(4)));
    if (done.size >= count || Date.now() > deadline) return done;
    await new Promise((r) => setTimeout(r, 50));
  }
}

function times(all: string[], line: string): number {
  return all.filter((l) => l === line).length;
}

const TEN = Array.from({ length: 10 }, (_, i) => String(i + 1));

async function acceptTen(d: Awaited<ReturnType<typeof serveOn>>): Promise<void> {
  for (const id of TEN) {
    const answer = await d.call("POST", "/v1/events/task.done", { task: { id: Number(id) } });
    assert.equal(answer.status, 202, JSON.stringify(answer.body));
  }
}

function spoolFiles(state: string): string[] {
  const dir = join(state, "tyhooks", "spool");
  const found: string[] = [];
  for (const entry of Deno.readDirSync(dir)) {
    if (entry.isDirectory) {
      for (const inner of Deno.readDirSync(join(dir, entry.name))) {
        if (inner.name.endsWith(".json")) found.push(inner.name);
      }
    } else if (entry.name.endsWith(".json")) found.push(entry.name);
  }
  return found;
}

Deno.test("serve: 10 events accepted, SIGTERM with hooks cut: a restart runs every one of them", async () => {
  const { plugins, state, log } = await setup(1);
  const env = { XDG_STATE_HOME: state };
  // Two event slots: two hooks are running when the stop comes, and are cut.
  const args = ["--max-procs", "3", "--stop-timeout", "100ms"];
  const first = await serveOn(plugins, args, { env });
  try {
    await acceptTen(first);
    await new Promise((r) => setTimeout(r, 300));
    const { code, stderr } = await first.stop("SIGTERM");
    assert.equal(code, 0, stderr);
    assert.match(stderr, /stay in the spool/);
  } finally {
    await first.kill();
  }
  const done = (await ended(log)).size;
  assert.ok(done < 10, "some events were still to run at the stop");
  assert.ok(spoolFiles(state).length >= 10 - done, "the events not run are on disk");
  await using second = await serveOn(plugins, args, { env });
  assert.deepEqual([...await ended(log, 10)].sort(), [...TEN].sort());
  const all = await lines(log);
  for (const id of TEN) assert.ok(times(all, `end ${id}`) >= 1, `event ${id} never ended`);
  // Once every hook has run, nothing is left on disk.
  const deadline = Date.now() + 5000;
  while (spoolFiles(state).length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 50));
  }
  assert.deepEqual(spoolFiles(state), []);
  assert.equal((await second.call("GET", "/v1/health")).body.spool_depth, 0);
});

Deno.test("serve: SIGTERM with --stop-timeout 5s lets the hooks in flight finish, and the restart runs each event once", async () => {
  const { plugins, state, log } = await setup(1);
  const env = { XDG_STATE_HOME: state };
  const args = ["--max-procs", "3", "--stop-timeout", "5s"];
  const first = await serveOn(plugins, args, { env });
  let inFlight: string[];
  try {
    await acceptTen(first);
    await new Promise((r) => setTimeout(r, 300));
    inFlight = (await lines(log)).filter((l) => l.startsWith("start ")).map((l) => l.slice(6));
    const { code, stderr } = await first.stop("SIGTERM");
    assert.equal(code, 0, stderr);
  } finally {
    await first.kill();
  }
  assert.ok(inFlight.length > 0, "no hook was running at the stop");
  const afterStop = await lines(log);
  for (const id of inFlight) {
    assert.equal(times(afterStop, `end ${id}`), 1, `event ${id} did not finish before the exit`);
  }
  await using _second = await serveOn(plugins, args, { env });
  assert.equal((await ended(log, 10)).size, 10);
  await new Promise((r) => setTimeout(r, 300));
  const all = await lines(log);
  for (const id of TEN) assert.equal(times(all, `start ${id}`), 1, `event ${id}: ${all}`);
});

/** What a daemon (--max-procs 3) leaves when it is sent SIGKILL after accepting TEN events. */
async function killedAfterTen() {
  const { plugins, state, log } = await setup(1);
  const env = { XDG_STATE_HOME: state };
  const first = await serveOn(plugins, ["--max-procs", "3"], { env });
  await acceptTen(first);
  await first.stop("SIGKILL");
  return { plugins, state, log, env };
}

Deno.test("serve: SIGKILL with 10 events accepted loses none: a restart runs them all", async () => {
  const { plugins, log, env } = await killedAfterTen();
  assert.ok((await ended(log)).size < 10);
  await using _second = await serveOn(plugins, ["--max-procs", "3"], { env });
  assert.deepEqual([...await ended(log, 10)].sort(), [...TEN].sort());
});

Deno.test("serve: GET /v1/health reports the events accepted and not yet run", async () => {
  const { plugins, state } = await setup(3);
  await using d = await serveOn(plugins, ["--max-procs", "2"], { env: { XDG_STATE_HOME: state } });
  for (let i = 0; i < 3; i++) await d.call("POST", "/v1/events/task.done", {});
  const health = (await d.call("GET", "/v1/health")).body;
  assert.equal(health.spool_depth, 3);
  assert.ok(health.spool_bytes > 0);
});

Deno.test("serve: a corrupt and a group-readable spool file are set aside with a log line; the rest run", async () => {
  const { plugins, state, log, env } = await killedAfterTen();
  const dir = join(state, "tyhooks", "spool");
  const runner = [...Deno.readDirSync(dir)].find((e) => e.isDirectory)!.name;
  const corrupt = "0000000000001-000001-00000000.json";
  const loose = "0000000000002-000002-00000000.json";
  await Deno.writeTextFile(join(dir, corrupt), '{"tyhooks_spool":1,"what":', { mode: 0o600 });
  // A valid document another user could read: not trusted to run.
  const kept = [...Deno.readDirSync(join(dir, runner))].find((e) => e.name.endsWith(".json"))!;
  const valid = await Deno.readTextFile(join(dir, runner, kept.name));
  await Deno.writeTextFile(join(dir, loose), valid);
  await Deno.chmod(join(dir, loose), 0o644);
  await using second = await serveOn(plugins, ["--max-procs", "3"], { env });
  assert.equal((await ended(log, 10)).size, 10);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name);
  assert.ok(names.includes(`${corrupt}.corrupt`), names.join(" "));
  assert.ok(names.includes(`${loose}.unsafe`), names.join(" "));
  assert.match(
    second.stderr(),
    /Spool file "0000000000001-000001-00000000\.json" set aside: not a spool/,
  );
  assert.match(second.stderr(), /has mode 0644, not 0600/);
  const listed = await cli(["spool", "list", "--json"], { env });
  assert.deepEqual(
    JSON.parse(listed.stdout).set_aside.map((s: { reason: string }) => s.reason).sort(),
    ["corrupt", "unsafe"],
  );
});

Deno.test("fire --detach whose background run is killed: spool list shows the event, spool run runs it", async () => {
  const { plugins, state, log } = await setup(30);
  const env = { XDG_STATE_HOME: state, XDG_CACHE_HOME: await tempDir({ prefix: "tyh-cache-" }) };
  const r = await cli(
    ["fire", "task.done", "--detach", "--task-json", '{"id":7}', "--plugins-dir", plugins],
    { env },
  );
  assert.equal(r.code, 0, r.stderr);
  const pid = Number(/pid=(\d+)/.exec(r.stderr)?.[1]);
  const deadline = Date.now() + 20_000;
  while (!(await lines(log)).includes("start 7") && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  assert.ok((await lines(log)).includes("start 7"), "the background run started the hook");
  Deno.kill(pid, "SIGKILL");
  assert.ok(await waitGone(pid), "the background run is gone");
  // Its hook is in a session of its own and outlives it: stop it too, as a reboot would.
  Deno.kill(-Number(await Deno.readTextFile(join(plugins, "n", "pid.7"))), "SIGKILL");

  // The kernel drops the dead run's lock a moment after it exits: until then it is "running".
  let entries = [];
  for (const deadline = Date.now() + 5000; Date.now() < deadline;) {
    const listed = await cli(["spool", "list", "--json"], { env });
    assert.equal(listed.code, 0, listed.stderr);
    entries = JSON.parse(listed.stdout).entries;
    if (entries[0]?.state === "pending") break;
  }
  assert.equal(entries.length, 1);
  assert.equal(entries[0].state, "pending");
  assert.equal(entries[0].what, "fire task.done");
  assert.equal(entries[0].source, "detached");
  assert.equal(entries[0].plugins_dir, plugins);

  // Shorter now: the script is read at each run.
  await Deno.writeTextFile(
    join(plugins, "n", "done.sh"),
    '#!/bin/sh\necho "end $TASK_ID" >> "$TASK_PLUGIN_DIR/log"\n',
  );
  const ran = await cli(["spool", "run", "--json"], { env, cwd: state });
  assert.equal(ran.code, 0, ran.stderr);
  assert.deepEqual(JSON.parse(ran.stdout).ran.map((e: { what: string }) => e.what), [
    "fire task.done",
  ]);
  assert.ok((await lines(log)).includes("end 7"));
  assert.deepEqual(
    JSON.parse((await cli(["spool", "list", "--json"], { env })).stdout).entries,
    [],
  );
});

Deno.test("two spool runs at once run each event exactly once", async () => {
  const { plugins, state, log } = await setup(0.2);
  const env = { XDG_STATE_HOME: state };
  // Ten events as a --detach run leaves them: the command line, waiting in the spool.
  const dir = join(state, "tyhooks", "spool");
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  for (const id of TEN) {
    const doc = {
      tyhooks_spool: 1,
      accepted_at: new Date().toISOString(),
      what: "fire task.done",
      args: ["fire", `--plugins-dir=${plugins}`, `--task-json={"id":${id}}`, "--", "task.done"],
    };
    const name = `${String(Date.now()).padStart(13, "0")}-${id.padStart(6, "0")}-0000000${
      id === "10" ? "a" : id
    }.json`;
    await Deno.writeTextFile(join(dir, name), JSON.stringify(doc), { mode: 0o600 });
  }
  const runs = [0, 1].map(() => spawnCli(["spool", "run", "--json"], { env }));
  const outputs = await Promise.all(runs.map((run) => run.output()));
  const ran: string[] = [];
  for (const out of outputs) {
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    ran.push(
      ...JSON.parse(new TextDecoder().decode(out.stdout)).ran.map((r: { name: string }) => r.name),
    );
  }
  assert.equal(ran.length, 10);
  const all = await lines(log);
  for (const id of TEN) assert.equal(times(all, `start ${id}`), 1, all.join("\n"));
  assert.deepEqual(spoolFiles(state), []);
});

Deno.test("spool list and spool run where nothing was ever spooled make no spool dir", async () => {
  const home = await tempDir();
  const state = join(home, "state");
  const env = { HOME: home, XDG_STATE_HOME: state };
  // A background run whose caller and state dir are gone looks for its entry like this.
  const run = await cli(["spool", "run", "--json", "--", "20261202T000000-gone"], { env });
  assert.deepEqual(JSON.parse(run.stdout), { ran: [], set_aside: [], left: [] }, run.stderr);
  assert.equal(run.code, 0);
  const list = await cli(["spool", "list", "--json"], { env });
  assert.deepEqual(JSON.parse(list.stdout), { entries: [], set_aside: [] });
  await assert.rejects(Deno.lstat(state), Deno.errors.NotFound);
});

Deno.test("serve: a spool that cannot be written refuses events, in one line naming it and the event, only while it cannot; a stop then exits 0 and removes the socket", async () => {
  const { plugins, state, log } = await setup(0);
  const dir = join(state, "tyhooks", "spool");
  const d = await serveOn(plugins, [], { env: { XDG_STATE_HOME: state } });
  // One line that names the spool and the event refused, in the answer and in the daemon's log.
  const said = /^Cannot spool "task\.done": the spool ".*\/spool" cannot be written: [^\n]+$/;
  try {
    // The spool dir gone from its path: no runner dir can be made in it.
    await Deno.rename(dir, `${dir}.away`);
    const refused = await d.call("POST", "/v1/events/task.done", { task: { id: 1 } });
    assert.equal(refused.status, 503, JSON.stringify(refused.body));
    assert.match(refused.body.error, said);
    await Deno.rename(`${dir}.away`, dir);
    const accepted = await d.call("POST", "/v1/events/task.done", { task: { id: 2 } });
    assert.equal(accepted.status, 202, JSON.stringify(accepted.body));
    assert.deepEqual([...await ended(log, 1)], ["2"]);
    const { code, stderr } = await d.stop("SIGINT");
    assert.equal(code, 0, stderr);
    await assert.rejects(Deno.lstat(d.socket!), Deno.errors.NotFound);
    assert.ok(
      stderr.split("\n").some((line) => said.test(line.replace(/^tyhooks: error: /, ""))),
      stderr,
    );
  } finally {
    await d.kill();
  }
});

Deno.test("fire --detach and serve refuse a spool whose parent dir others can write", async () => {
  const { plugins, state, log } = await setup(0);
  await Deno.mkdir(join(state, "tyhooks"), { mode: 0o700 });
  await Deno.chmod(join(state, "tyhooks"), 0o777);
  const env = { XDG_STATE_HOME: state };
  const fire = await cli(
    ["fire", "task.done", "--detach", "--task-json", '{"id":7}', "--plugins-dir", plugins],
    { env },
  );
  assert.equal(fire.code, 1, fire.stderr);
  assert.match(fire.stderr, /Cannot use the spool: ".*\/tyhooks" is writable by group or others/);
  const serve = await serveFailure([
    "--listen",
    `unix:${await tempSocket()}`,
    "--plugins-dir",
    plugins,
  ], {
    env,
  });
  assert.equal(serve.code, 1, serve.stderr);
  assert.match(serve.stderr, /Cannot use the spool: ".*\/tyhooks" is writable by group or others/);
  assert.deepEqual(await lines(log), []);
});
