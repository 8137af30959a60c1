import assert from "node:assert/strict";
import { join } from "node:path";
import { runScript } from "../../lib/process/run_script.ts";
import { startServices } from "../../lib/services/service_set.ts";
import { alive, BASH, pidFile, readPid, waitGone } from "../_procs.ts";
import { serviceIndex } from "../_index.ts";
import type { PluginService } from "../../lib/plugins/types.ts";

const ignore = BASH === undefined; // Skipped (and so reported) on hosts without bash.

/** Group and session of `pid`, from /proc. */
function ids(pid: number): { pgrp: number; session: number } {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  const [, , pgrp, session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return { pgrp: Number(pgrp), session: Number(session) };
}

Deno.test({
  name: "runScript() at its timeout also ends a child that left the group with set -m",
  ignore,
  async fn() {
    const stray = await pidFile();
    const run = runScript(BASH!, {
      args: ["-c", 'set -m; sleep 60 & echo $! > "$STRAY"; sleep 60'],
      env: { STRAY: stray },
      timeoutMs: 1000,
      graceMs: 300,
    });
    const pid = await readPid(stray);
    // Before: out of the script's group (a group kill misses it), still in its session.
    const { pgrp, session } = ids(pid);
    assert.equal(pgrp, pid, "the stray leads a group of its own");
    const r = await run;
    assert.equal(session, r.pid, "the stray is in the script's session");
    assert(r.timed_out);
    // After: dead when the call returns.
    assert(!alive(pid), "the set -m child is dead when runScript returns");
  },
});

Deno.test({
  name: "runScript() SIGKILLs a set -m group that ignores SIGTERM, subshell and child alike",
  ignore,
  async fn() {
    const stray = await pidFile();
    const r = await runScript(BASH!, {
      args: [
        "-c",
        'set -m; ( trap "" TERM; sleep 60 & echo $! > "$STRAY"; wait ) & sleep 60',
      ],
      env: { STRAY: stray },
      timeoutMs: 500,
      graceMs: 200,
    });
    assert(r.timed_out);
    const pid = await readPid(stray);
    // SIGKILL was sent before runScript returned; it takes effect when the kernel next runs the
    // process, which a loaded machine (four test files on two cores) may delay by some ms.
    assert(await waitGone(pid, 500), "the TERM-proof grandchild is dead once SIGKILL lands");
  },
});

Deno.test("runScript() lets a deliberate setsid escape the session cleanup", async () => {
  const escapee = await pidFile();
  const r = await runScript("sh", {
    args: ["-c", 'setsid sh -c \'echo $$ > "$1"; exec sleep 60\' sh "$ESC" & sleep 60'],
    env: { ESC: escapee },
    timeoutMs: 500,
    graceMs: 200,
  });
  assert(r.timed_out);
  const pid = await readPid(escapee);
  assert(alive(pid), "only setsid leaves the session");
  Deno.kill(pid, "SIGKILL");
  assert(await waitGone(pid));
});

/**
 * Runs one service, `name`, whose bash `script` writes a stray's pid to `stray` in its dir; stops
 * it after `fn`.
 */
async function withStray(
  service: { name: string; script: string; restart?: PluginService["restart"] },
  fn: (set: ReturnType<typeof startServices>, pid: number) => Promise<void>,
): Promise<void> {
  const { script, ...rest } = service;
  const { index, dir } = await serviceIndex([{ ...rest, command: `${BASH} -c '${script}'` }]);
  const set = startServices(index);
  try {
    await fn(set, await readPid(join(dir, "stray")));
  } finally {
    await set.stop();
  }
}

Deno.test({
  name: "stopping a service also ends the children it moved to groups of their own",
  ignore,
  async fn() {
    await withStray({
      name: "jobs",
      script: "set -m; sleep 60 & echo $! > stray; sleep 60 & wait",
    }, async (set, pid) => {
      assert.notEqual(ids(pid).pgrp, set.status()[0].pid, "out of the service's group");
      await set.stop({ stopTimeoutMs: 1000 });
      assert(!alive(pid), "the set -m child is dead when stop() returns");
    });
  },
});

Deno.test({
  name:
    "runScript() ends a child that left the group with set -m and holds the output, once the script has exited",
  ignore,
  async fn() {
    for (const mode of ["consult", "notify"] as const) {
      const stray = await pidFile();
      const r = await runScript(BASH!, {
        // Exits at once; its set -m child keeps stdout open, in a group of its own.
        args: ["-c", 'set -m; sleep 60 & echo $! > "$STRAY"; echo done'],
        env: { STRAY: stray },
        timeoutMs: 5000,
        graceMs: 200,
        mode,
      });
      assert.equal(r.timed_out, false, mode);
      assert.equal(r.exit_code, 0, mode);
      const pid = await readPid(stray);
      assert(await waitGone(pid, 500), `${mode}: the set -m child outlived the run`);
    }
  },
});

Deno.test({
  name: "a service that exits leaves no child it moved to a group of its own",
  ignore,
  async fn() {
    await withStray({
      name: "leaver",
      script: "set -m; sleep 60 & echo $! > stray; exit 0",
      restart: "never",
    }, async (_set, pid) => {
      assert(await waitGone(pid, 3000), "the set -m child outlived its service");
    });
  },
});

Deno.test({
  name:
    "runScript() with sweepSession ends a child that left the group and let go of the output, once the script has exited",
  ignore,
  async fn() {
    for (const sweepSession of [true, false]) {
      const stray = await pidFile();
      const r = await runScript(BASH!, {
        args: ["-c", 'set -m; sleep 60 >/dev/null 2>&1 & echo $! > "$STRAY"'],
        env: { STRAY: stray },
        timeoutMs: 5000,
        graceMs: 200,
        mode: "notify",
        sweepSession,
      });
      assert.equal(r.exit_code, 0);
      const pid = await readPid(stray);
      if (sweepSession) {
        assert(await waitGone(pid, 500), "the set -m child outlived the run");
        continue;
      }
      // Control: a hook's run pays no scan, and the child is seen nowhere else.
      assert(alive(pid), "control: without the sweep the child is left");
      Deno.kill(pid, "SIGKILL");
      assert(await waitGone(pid));
    }
  },
});

Deno.test({
  name:
    "a service that exits leaves no child it moved to a group of its own and gave its output up",
  ignore,
  async fn() {
    await withStray({
      name: "quiet-leaver",
      script: "set -m; sleep 60 >/dev/null 2>&1 & echo $! > stray; exit 0",
      restart: "never",
    }, async (_set, pid) => {
      assert(await waitGone(pid, 3000), "the set -m child outlived its service");
    });
  },
});
