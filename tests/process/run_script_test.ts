import assert from "node:assert/strict";
import {
  DRAIN_MS,
  MAX_ENV_VALUE_BYTES,
  type RunOptions,
  runScript,
} from "../../lib/process/run_script.ts";
import { ExecFormatError, spawnIsolated } from "../../lib/process/group.ts";
import { alive, fixture, groupGone, pidFile, readPid, waitGone } from "../_procs.ts";
import { dirname, join } from "node:path";
import { tempDir } from "../_cli.ts";
import { Runner } from "../../lib/hooks/runner.ts";

/** {@linkcode runScript} of `sh -c line`. */
function sh(line: string, options: Omit<RunOptions, "args"> = {}) {
  return runScript("sh", { ...options, args: ["-c", line] });
}

Deno.test("runScript() returns exit code, stdout, stderr and byte counts", async () => {
  const r = await runScript(fixture("exit_code.sh"), { args: ["3"], stdin: "payload" });
  assert.deepEqual(r.exit_code, 3);
  assert.deepEqual(r.stdout, "args=3\npayload");
  assert.deepEqual(r.stderr, "stderr line\n");
  assert.deepEqual([r.stdout_bytes, r.stderr_bytes], [14, 12]);
  assert.deepEqual([r.timed_out, r.signal, r.error], [false, null, null]);
  assert(r.pid !== null && r.pid > 0);
});

Deno.test("runScript() gives each script its own process group", async () => {
  const r = await sh("ps -o pgid= -p $$");
  assert.deepEqual(Number(r.stdout.trim()), r.pid);
});

Deno.test("runScript() kills a hung script at its timeout and keeps what it printed", async () => {
  // 1 s: time to print before the kill even with four test files on two cores (at 200 ms, one CI
  // run of 2026-12-02 killed it before its echo ran).
  const r = await runScript(fixture("hang.sh"), { timeoutMs: 1000 });
  assert(r.timed_out);
  assert.deepEqual(r.signal, "SIGTERM");
  assert.deepEqual(r.exit_code, null);
  assert.deepEqual(r.stdout, "started\n");
  assert(groupGone(r.pid!));
});

Deno.test("runScript() SIGKILLs a script that ignores SIGTERM after the grace period", async () => {
  const path = await pidFile();
  const r = await runScript(fixture("ignores_term.sh"), {
    timeoutMs: 300,
    graceMs: 200,
    env: { PID_FILE: path },
  });
  assert(r.timed_out);
  assert.deepEqual(r.signal, "SIGKILL");
  assert(!alive(await readPid(path)));
});

Deno.test("runScript() keeps the answer of a script whose child holds the pipe, and ends the child", async () => {
  const path = await pidFile();
  const r = await runScript(fixture("bg_child_holds_pipe.sh"), {
    timeoutMs: 5000,
    env: { PID_FILE: path },
  });
  assert.deepEqual([r.exit_code, r.stdout, r.timed_out], [0, "answer\n", false]);
  assert(await waitGone(await readPid(path), 1000), "the leftover child was terminated");
  assert(groupGone(r.pid!));
});

Deno.test("runScript() abandons a pipe held by a descendant that escaped with setsid", async () => {
  const path = await pidFile();
  const started = performance.now();
  const r = await runScript(fixture("setsid_escape.sh"), {
    timeoutMs: 5000,
    env: { PID_FILE: path },
  });
  const elapsed = performance.now() - started;
  assert.deepEqual([r.exit_code, r.stdout], [0, "answer\n"]);
  // The escapee sleeps 3 s holding stdout; the call must not wait for it (a bound, not a timing).
  assert(elapsed < 2500, `returned after ${elapsed} ms`);
  const escapee = await readPid(path);
  Deno.kill(escapee, "SIGKILL");
});

Deno.test("runScript() caps captured output, drops the rest, and says so", async () => {
  const r = await runScript(fixture("floods.sh"), {
    env: { BYTES: "3000000" },
    maxOutputBytes: 1024,
  });
  assert.deepEqual(r.stdout.length, 1024);
  assert.deepEqual(r.stdout_bytes, 3_000_000);
  assert(r.stdout_truncated);
  assert(!r.stderr_truncated);
});

Deno.test("runScript() reports a missing script as a start error, not a throw", async () => {
  const r = await runScript("/nonexistent/dir/script.sh");
  assert.deepEqual(r.pid, null);
  assert.match(r.error!, /no such file/);
});

Deno.test("runScript() reports a script without the exec bit as a start error with a hint", async () => {
  const dir = await tempDir();
  await Deno.writeTextFile(`${dir}/x.sh`, "#!/bin/sh\necho hi\n");
  const r = await runScript(`${dir}/x.sh`);
  assert.match(r.error!, /not executable \(hint: chmod \+x/);
});

Deno.test("runScript() reports a missing shebang interpreter as a start error naming it, not the isolator", async () => {
  const r = await runScript(fixture("bad_interpreter.sh"));
  assert.deepEqual([r.pid, r.exit_code, r.stdout], [null, null, ""]);
  assert.match(
    r.error!,
    /^Cannot start ".*bad_interpreter\.sh": its "#!" line names the interpreter "\/nonexistent\/interpreter", which does not exist \(hint: /,
  );
  assert.doesNotMatch(r.error!, /setsid|failed to execute/);
  const { path } = await script("dir_interpreter.sh", "#!/tmp\necho never\n");
  const dir = await runScript(path);
  assert.match(dir.error!, /names the interpreter "\/tmp", which is not an executable file/);
});

/** A script at `name` in a fresh dir, executable, with `text`; $MARK names a file beside it. */
async function script(name: string, text: string): Promise<{ path: string; mark: string }> {
  const dir = await tempDir();
  const path = join(dir, name);
  await Deno.writeTextFile(path, text);
  await Deno.chmod(path, 0o755);
  return { path, mark: join(dir, "ran") };
}

const leavesMark = 'echo ran > "$MARK"\necho ran\n';

Deno.test("runScript() refuses a script without a #! line rather than running it through sh", async () => {
  for (const text of [leavesMark, "", "#!\n" + leavesMark, "\ufeff#!/bin/sh\n" + leavesMark]) {
    const { path, mark } = await script("plain.sh", text);
    const r = await runScript(path, { env: { MARK: mark } });
    assert.deepEqual([r.pid, r.exit_code, r.stdout], [null, null, ""], JSON.stringify(text));
    assert.match(r.error!, /^Cannot start ".*plain\.sh": it does not start with a "#!" line/);
    assert.match(r.error!, /exec format error.*hint: make its first line "#!\/bin\/sh"/);
    await assert.rejects(Deno.stat(mark), Deno.errors.NotFound, "it never ran");
  }
});

Deno.test("spawnIsolated() refuses a file without a #! line on the setsid path and the detached path", async () => {
  const { path } = await script("plain.sh", leavesMark);
  for (const forceDetached of [false, true]) {
    assert.throws(() => spawnIsolated(path, { forceDetached }), ExecFormatError);
  }
  // Relative to its cwd, as the spawn resolves it.
  assert.throws(() => spawnIsolated("./plain.sh", { cwd: dirname(path) }), ExecFormatError);
});

Deno.test("runScript() still runs a native binary named by its path", async () => {
  const r = await runScript("/bin/sh", { args: ["-c", "echo binary"] });
  assert.deepEqual([r.error, r.stdout], [null, "binary\n"]);
});

Deno.test("runScript() says so when a script cannot start because its #! line ends in a carriage return", async () => {
  const { path, mark } = await script(
    "crlf.sh",
    "#!/bin/sh\r\n" + leavesMark.replaceAll("\n", "\r\n"),
  );
  const r = await runScript(path, { env: { MARK: mark } });
  assert.deepEqual([r.pid, r.exit_code], [null, null]);
  assert.match(r.error!, /^Cannot start ".*crlf\.sh": its "#!" line ends in a carriage return/);
  assert.match(r.error!, /hint: dos2unix ".*crlf\.sh", or sed -i 's\/\\r\$\/\/' /);
  await assert.rejects(Deno.stat(mark), Deno.errors.NotFound, "it never ran");
});

Deno.test("runScript() cleans NUL bytes out of env values instead of crashing", async () => {
  const r = await sh('printf %s "$V"', { env: { V: "a\0b" } });
  assert.deepEqual([r.error, r.stdout], [null, "ab"]);
});

Deno.test("runScript() terminates the group at once when its signal aborts", async () => {
  const controller = new AbortController();
  setTimeout(() => controller.abort(), 100);
  const r = await runScript(fixture("hang.sh"), { timeoutMs: 10_000, signal: controller.signal });
  assert.deepEqual([r.timed_out, r.error, r.signal], [false, "Interrupted", "SIGTERM"]);
  assert(groupGone(r.pid!));
});

Deno.test("runScript() does not hang on a large stdin payload the script never reads", async () => {
  const r = await runScript("true", { stdin: "x".repeat(5_000_000) });
  assert.deepEqual(r.exit_code, 0);
});

const scratchDir = () => tempDir({ prefix: "tyhooks-mode-" });

/** `sh -c script` in notify mode; $DONE names a file in a fresh dir for the script to write. */
async function notifyRun(script: string) {
  const done = join(await scratchDir(), "done");
  const r = await sh(script, {
    env: { DONE: done },
    mode: "notify",
    timeoutMs: 10_000,
  });
  return { r, done };
}

Deno.test("runScript() in notify mode lasts until a background job holding its pipe has finished", async () => {
  const { r, done } = await notifyRun(
    'echo start; ( sleep 0.5; echo late; echo done > "$DONE" ) & exit 0',
  );
  assert.deepEqual([r.exit_code, r.timed_out, r.stdout], [0, false, "start\nlate\n"]);
  assert.equal(await Deno.readTextFile(done), "done\n");
  assert(groupGone(r.pid!));
});

Deno.test("runScript() in notify mode lasts until a background job with no pipe has finished", async () => {
  const { r, done } = await notifyRun(
    '( sleep 0.5; echo done > "$DONE" ) >/dev/null 2>&1 </dev/null & exit 0',
  );
  assert.deepEqual([r.exit_code, r.timed_out], [0, false]);
  assert.equal(await Deno.readTextFile(done), "done\n");
});

Deno.test("runScript() in notify mode ends a background job at the timeout, within timeout + grace + 100 ms", async () => {
  const path = await pidFile();
  const timeoutMs = 500;
  const graceMs = 300;
  const started = performance.now();
  const r = await sh('sleep 60 >/dev/null 2>&1 & echo $! > "$PID_FILE"; exit 0', {
    env: { PID_FILE: path },
    mode: "notify",
    timeoutMs,
    graceMs,
  });
  const elapsed = performance.now() - started;
  // The script itself exited 0; its background job is what the timeout ended.
  assert.deepEqual([r.exit_code, r.timed_out], [0, true]);
  assert(!alive(await readPid(path)), "the background job is dead when the call returns");
  assert(groupGone(r.pid!));
  assert(elapsed < timeoutMs + graceMs + DRAIN_MS, `returned after ${elapsed} ms`);
  await Deno.remove(dirname(path), { recursive: true });
});

Deno.test("runScript() in notify mode does not wait for a pipe held by a setsid escapee", async () => {
  const path = await pidFile();
  const started = performance.now();
  const r = await runScript(fixture("setsid_escape.sh"), {
    env: { PID_FILE: path },
    mode: "notify",
    timeoutMs: 5000,
  });
  const elapsed = performance.now() - started;
  assert.deepEqual([r.exit_code, r.stdout, r.timed_out], [0, "answer\n", false]);
  // The escapee holds stdout for 3 s: the call must not wait for it (a bound, not a timing).
  assert(elapsed < 2500, `returned after ${elapsed} ms`);
  Deno.kill(await readPid(path), "SIGKILL");
  await Deno.remove(dirname(path), { recursive: true });
});

Deno.test("runScript() in consult mode (the default) ends a background job as soon as the script exits", async () => {
  const path = await pidFile();
  const r = await sh('sleep 60 >/dev/null 2>&1 & echo $! > "$PID_FILE"; echo answer', {
    env: { PID_FILE: path },
    timeoutMs: 30_000,
  });
  assert.deepEqual([r.exit_code, r.timed_out, r.stdout], [0, false, "answer\n"]);
  assert(!alive(await readPid(path)));
  await Deno.remove(dirname(path), { recursive: true });
});

Deno.test("runScript() cuts an environment value over 64 KiB to 64 KiB, never splitting a character", async () => {
  // 1 + 2 x 100,000 bytes: far over Linux's 128 KiB per string, which would make exec fail.
  const r = await sh('printf %s "$BIG" | wc -c; printf %s "$SMALL"', {
    env: { BIG: "a" + "é".repeat(100_000), SMALL: "kept" },
  });
  assert.equal(r.error, null);
  // 65,536 would split the last "é": the cut stops one byte short.
  assert.deepEqual(r.stdout.split("\n").map((l) => l.trim()), [
    String(MAX_ENV_VALUE_BYTES - 1),
    "kept",
  ]);
});

Deno.test("runScript() and Runner refuse a timeout or grace that is not a finite number of at least 0, before anything starts", async () => {
  const dir = await tempDir();
  const marker = join(dir, "started");
  for (
    const options of [{ timeoutMs: NaN }, { timeoutMs: -5 }, { timeoutMs: Infinity }, {
      graceMs: NaN,
    }, { timeoutMs: "100" as unknown as number }]
  ) {
    await assert.rejects(
      runScript("sh", { args: ["-c", `touch ${marker}; sleep 5`], ...options }),
      { name: "RangeError", message: /^Invalid (timeoutMs|graceMs): .* \(must be a finite number/ },
      JSON.stringify(options),
    );
  }
  assert.throws(
    () => new Runner({ dir: dir, plugins: [], warnings: [] }, { timeouts: { event: NaN } }),
    {
      message: /^Invalid event timeout: NaN ms/,
    },
  );
  assert.equal(await Deno.stat(marker).catch(() => null), null, "no script was started");
});
