import assert from "node:assert/strict";
import { join } from "node:path";
import { handOffDetached, spawnDetached } from "../../lib/process/detach.ts";
import { RunError } from "../../lib/errors.ts";
import { alive } from "../_procs.ts";
import { tempDir } from "../_cli.ts";

async function waitForText(path: string, text: string): Promise<string> {
  for (let i = 0; i < 500; i++) {
    const content = await Deno.readTextFile(path).catch(() => "");
    if (content.includes(text)) return content;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`"${text}" never reached ${path}`);
}

Deno.test("spawnDetached() appends the background run's output to the log", async () => {
  const log = join(await tempDir(), "sub", "detached.log");
  spawnDetached(["sh", "-c", "echo first"], log);
  await waitForText(log, "first\n");
  spawnDetached(["sh", "-c", "echo second"], log);
  assert.equal(await waitForText(log, "second\n"), "first\nsecond\n");
});

Deno.test("spawnDetached() starts the run as the leader of a session of its own, with the pid it returns", async () => {
  const log = join(await tempDir(), "detached.log");
  // Fields 1, 5 and 6 of /proc/PID/stat: the pid, its group and its session.
  const run = spawnDetached([
    "sh",
    "-c",
    'read -r pid _ _ _ pgid sid _ </proc/$$/stat; echo "$pid $pgid $sid ."',
  ], log);
  const line = await waitForText(log, " .\n");
  assert.equal(line, `${run.pid} ${run.pid} ${run.pid} .\n`);
  const ours = Deno.readTextFileSync("/proc/self/stat").split(") ")[1].split(" ")[3];
  assert.notEqual(String(run.pid), ours);
});

Deno.test("spawnDetached() moves a full log to .1 and starts a fresh one, keeping two files", async () => {
  const log = join(await tempDir(), "detached.log");
  await Deno.writeTextFile(log, "x".repeat(100));
  await Deno.writeTextFile(`${log}.1`, "oldest\n");
  spawnDetached(["sh", "-c", "echo new"], log, { maxLogBytes: 64 });
  assert.equal(await waitForText(log, "new\n"), "new\n");
  assert.equal(await Deno.readTextFile(`${log}.1`), "x".repeat(100));
  // Under the limit: appended to, not rotated.
  spawnDetached(["sh", "-c", "echo more"], log, { maxLogBytes: 64 });
  assert.equal(await waitForText(log, "more\n"), "new\nmore\n");
});

// A stand-in for the background tyhooks: reads its work, acknowledges, records the work.
const RECEIVER = [
  "sh",
  "-c",
  'cat > "$0.work"; printf "tyhooks: work received\\n"; echo logged >&2',
];

async function tempLog(): Promise<{ dir: string; log: string }> {
  const dir = await tempDir({ prefix: "tyhooks-detach-" });
  return { dir, log: join(dir, "tyhooks", "detached.log") };
}

Deno.test("handOffDetached() sends the work as one JSON document on stdin and returns once it is read", async () => {
  const { dir, log } = await tempLog();
  const args = ["fire", "--message=-1 tests failed", "x".repeat(300_000)];
  const run = await handOffDetached([...RECEIVER, join(dir, "w")], args, log);
  assert.equal(run.logProblem, null);
  // Acknowledged means read: the whole document is there already.
  const work = await Deno.readTextFile(join(dir, "w.work"));
  assert.ok(work.endsWith("}\n") && work.split("\n").length === 2, "one line");
  assert.deepEqual(JSON.parse(work), { tyhooks_detached: 1, args });
});

Deno.test("handOffDetached() makes a background run that cannot start the caller's error", async () => {
  const { log } = await tempLog();
  await assert.rejects(
    handOffDetached(["/nonexistent/tyhooks"], ["fire"], log),
    (error: Error) =>
      error instanceof RunError &&
      /The background tyhooks ended \(exit 127\) before taking its work \(its log: ".*detached\.log"\)/
        .test(error.message),
  );
  assert.match(await Deno.readTextFile(log), /nonexistent/);
});

Deno.test("handOffDetached() makes a background run that never reads its work an error, bounded", async () => {
  const { log } = await tempLog();
  await assert.rejects(
    handOffDetached(["sleep", "30"], ["fire"], log, { ackTimeoutMs: 300 }),
    /did not take its work within 300 ms/,
  );
  await assert.rejects(
    handOffDetached(["true"], ["fire"], log),
    /ended \(exit 0\) before taking its work/,
  );
});

Deno.test("handOffDetached() interrupted before the acknowledgement rejects and leaves no background run", async () => {
  const { dir, log } = await tempLog();
  const controller = new AbortController();
  const pidFile = join(dir, "pid");
  // Interrupted once the background run has started (its pid written), not after a fixed time
  // that a loaded machine may spend before it starts.
  const started = (async () => {
    while (
      !(await Deno.readTextFile(`${pidFile}.pid`).then((t) => t.endsWith("\n"), () => false))
    ) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    controller.abort(new RunError("Interrupted by SIGTERM"));
  })();
  await assert.rejects(
    handOffDetached(["sh", "-c", 'echo $$ > "$0.pid"; exec sleep 30', pidFile], ["fire"], log, {
      signal: controller.signal,
    }),
    /Interrupted by SIGTERM/,
  );
  await started;
  const pid = Number(await Deno.readTextFile(`${pidFile}.pid`));
  assert.ok(pid > 0 && !alive(pid), "the stalled background run was ended");
});
