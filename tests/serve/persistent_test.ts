/**
 * Persistent hooks with real processes: a guard written as a read loop, run by an in-process
 * daemon over a unix socket. The guard answers `{"action","reason"}` with its pid and a request
 * count in the reason, so a test sees which process answered and in what order.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { startDaemon } from "../../lib/serve/server.ts";
import { PersistentHooks } from "../../lib/serve/persistent.ts";
import { loadPlugins } from "../../lib/plugins/load.ts";
import type { RunResult } from "../../lib/process/run_script.ts";
import { createLogger } from "../../lib/log.ts";
import { makeTree, tempDir } from "../_cli.ts";
import { alive, waitGone } from "../_procs.ts";
import { startServe, tempSocket } from "../cli/_serve.ts";

const GUARD = `#!/bin/sh
echo $$ >> "$TASK_PLUGIN_DIR/pids"
answer() { printf '{"id":"%s","action":"%s","reason":"%s"}\\n' "$id" "$1" "$2"; }
n=0
while IFS= read -r line; do
  n=$((n+1))
  id=\${line#*'"id":"'}; id=\${id%%'"'*}
  tool=$(printf '%s' "$line" | sed -n 's/.*"tool":"\\([^"]*\\)".*/\\1/p')
  case "$tool" in
    hang) sleep 60 ;;
    crash) exit 3 ;;
    junk) echo "not json" ;;
    huge) head -c 1100000 /dev/zero | tr '\\0' x; echo ;;
    blank) echo ;;
    chatty) echo "checking $tool"; answer allow "$tool $n $$" ;;
    extra) answer allow "$tool $n $$"; echo ;;
    noid) echo '{"action":"allow","reason":"'"$tool $n $$"'"}' ;;
    numid) echo '{"id":'"$id"',"action":"allow","reason":"'"$tool $n $$"'"}' ;;
    dup) answer block "$tool $n $$"; sleep 0.5; answer allow "$tool-2-stale" ;;
    rm) answer block "$tool $n $$" ;;
    *) answer allow "$tool $n $$" ;;
  esac
done
`;

const PLACE = `#!/bin/sh
echo $$ >> "$TASK_PLUGIN_DIR/pids"
while IFS= read -r line; do
  id=\${line#*'"id":"'}; id=\${id%%'"'*}
  echo '{"id":"'"$id"'","target":"host-'$$'","workdir":"~/w","reason":"persistent"}'
done
`;

function manifest(event: string, script: string, settings = "persistent: true"): string {
  return `name: p\nhooks:\n  ${event}: ${script}\ntyhooks:\n  ${event}: {${settings}}\n`;
}

/** A plugins dir with GUARD as its one persistent `pre_tool_call` hook. */
const GUARD_TREE = { "p/plugin.yaml": manifest("pre_tool_call", "g.sh"), "p/g.sh": GUARD };

async function daemonWith(
  files: Record<string, string>,
  timeouts = { tool: 1500, placement: 1500 },
  maxProcs?: number,
) {
  const plugins = await makeTree(files);
  const path = `${await tempDir({ prefix: "tyh-" })}/t.sock`;
  const lines: string[] = [];
  const daemon = await startDaemon({
    listen: { transport: "unix", path },
    pluginsDir: plugins,
    spoolDir: await tempDir({ prefix: "tyh-spool-" }),
    watch: false,
    timeouts,
    maxProcs,
    log: createLogger({ format: "json", level: "debug", write: (l) => lines.push(l) }),
  });
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path } });
  const post = async (route: string, body: unknown) => {
    const response = await fetch(`http://localhost${route}`, {
      method: "POST",
      body: JSON.stringify(body),
      client,
    });
    return await response.json();
  };
  const pids = async () =>
    (await Deno.readTextFile(join(plugins, "p", "pids")).catch(() => ""))
      .split("\n").filter((l) => l !== "").map(Number);
  return {
    daemon,
    pluginsDir: plugins,
    lines,
    pids,
    pre: (tool: string) => post("/v1/tool/pre", { tool }),
    post,
    async stop() {
      client.close();
      await daemon.stop();
      const all = await pids();
      await Deno.remove(plugins, { recursive: true });
      return all;
    },
  };
}

/** Runs `body` against a daemon over `files`, then stops it and checks no process is left. */
async function withDaemon(
  files: Record<string, string>,
  body: (d: Awaited<ReturnType<typeof daemonWith>>) => Promise<void>,
  timeouts?: { tool: number; placement: number },
  maxProcs?: number,
): Promise<void> {
  const d = await daemonWith(files, timeouts, maxProcs);
  let pids: number[] = [];
  try {
    await body(d);
  } finally {
    pids = await d.stop();
  }
  for (const pid of pids) assert.ok(await waitGone(pid), `process ${pid} left behind`);
}

Deno.test("persistent guard: one process answers every request, in order", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    const answers = [];
    for (const tool of ["ls", "rm", "cat", "ls"]) answers.push(await d.pre(tool));
    const [pid] = await d.pids();
    assert.deepEqual(answers, [
      { action: "allow", reason: `ls 1 ${pid}` },
      { action: "block", reason: `rm 2 ${pid}` },
      { action: "allow", reason: `cat 3 ${pid}` },
      { action: "allow", reason: `ls 4 ${pid}` },
    ]);
    // Ten at once through a pool of one: each gets its own answer.
    const many = await Promise.all(Array.from({ length: 10 }, (_, i) => d.pre(`t${i}`)));
    many.forEach((answer, i) => assert.match(answer.reason, new RegExp(`^t${i} \\d+ ${pid}$`)));
    assert.deepEqual((await d.pids()).length, 1);
  });
});

Deno.test("persistent guard: a request past its timeout kills the process; the next is answered by a new one", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    assert.equal((await d.pre("ls")).action, "allow");
    const [first] = await d.pids();
    const hung = await d.pre("hang");
    assert.equal(hung.action, "block");
    assert.match(hung.reason, /timed out after 1500 ms/);
    assert.ok(await waitGone(first), "the hung process was not killed");
    const next = await d.pre("ls");
    const [, second] = await d.pids();
    assert.deepEqual(next, { action: "allow", reason: `ls 1 ${second}` });
    assert.ok(d.lines.some((l) => l.includes("Persistent hook timed out: it is started again")));
  });
});

Deno.test("persistent guard: a crashed process is restarted", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    const crashed = await d.pre("crash");
    assert.equal(crashed.action, "block");
    assert.match(crashed.reason, /Persistent hook exited 3 before answering/);
    const next = await d.pre("ls");
    assert.equal(next.action, "allow");
    assert.equal((await d.pids()).length, 2);
  });
});

Deno.test("persistent guard: a request arriving as the process crashes is answered by the next process", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    assert.equal((await d.pre("ls")).action, "allow");
    // One process: "after" is written behind "crash" (and asked again), or waits for the next.
    const [crashed, after] = await Promise.all([d.pre("crash"), d.pre("after")]);
    assert.match(crashed.reason, /Persistent hook exited 3 before answering/);
    const [, second] = await d.pids();
    assert.deepEqual(after, { action: "allow", reason: `after 1 ${second}` });
  });
});

Deno.test("persistent guard: the request after a crash is answered within a 1 s timeout, 20 times of 20", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    for (let run = 1; run <= 20; run++) {
      const crashed = await d.pre("crash");
      assert.match(crashed.reason, /Persistent hook exited 3 before answering/, `run ${run}`);
      const next = await d.pre("ls");
      assert.equal(next.action, "allow", `run ${run}: ${next.reason}`);
      assert.match(next.reason, /^ls 1 \d+$/, `run ${run}`);
    }
  }, { tool: 1000, placement: 1000 });
});

Deno.test("persistent guard: while it waits to restart a process that keeps failing, one-shot runs of its script answer", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    // The first failure is replaced at once; the second process never answered, so the third
    // waits the backoff (1 s).
    await d.pre("crash");
    await d.pre("crash");
    const next = await d.pre("ls");
    const pids = await d.pids();
    assert.equal(pids.length, 3, `${pids}`);
    assert.deepEqual(next, { action: "allow", reason: `ls 1 ${pids[2]}` });
    assert.ok(await waitGone(pids[2]), "the one-shot run did not end after its line");
    // After the backoff, a process is started again and kept.
    await new Promise((r) => setTimeout(r, 1500));
    const later = await d.pre("ls");
    const [, , , fourth] = await d.pids();
    assert.deepEqual(later, { action: "allow", reason: `ls 1 ${fourth}` });
    assert.ok(alive(fourth), "the process started after the backoff was not kept");
  }, { tool: 1000, placement: 1000 });
});

Deno.test("persistent guard: a malformed or oversized answer fails that request only, and the guard blocks", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    const junk = await d.pre("junk");
    assert.equal(junk.action, "block");
    assert.match(junk.reason, /answered a line that is not JSON/);
    // Only that request failed: the next is answered, by a new process (one that wrote a line
    // that is not JSON may be out of step, so it is restarted).
    const [first] = await d.pids();
    const next = await d.pre("ls");
    const [, second] = await d.pids();
    assert.notEqual(second, first);
    assert.deepEqual(next, { action: "allow", reason: `ls 1 ${second}` });
    const huge = await d.pre("huge");
    assert.equal(huge.action, "block");
    assert.match(huge.reason, /answered a line longer than 1048576 bytes/, huge.reason);
    // By a new process: whose answer an overlong line was cannot be checked.
    const last = await d.pre("ls");
    const [, , third] = await d.pids();
    assert.deepEqual(last, { action: "allow", reason: `ls 1 ${third}` });
  });
});

Deno.test("persistent guard: a blank line is no answer: the request times out and the guard blocks, naming the blank line", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    const blank = await d.pre("blank");
    assert.equal(blank.action, "block");
    assert.match(blank.reason, /timed out/, blank.reason);
    assert.ok(
      d.lines.some((l) => /wrote 1 blank line\(s\), which are not answers/.test(l)),
      d.lines.join("\n"),
    );
  });
});

Deno.test("persistent placement hook: answers through its process; max_procs runs a pool, at most --max-procs processes", async () => {
  // Each answer takes 0.2 s, so six requests at once would start six processes if allowed.
  const slow = PLACE.replace(
    "while IFS= read -r line; do",
    "while IFS= read -r line; do sleep 0.2",
  );
  for (const [pool, maxProcs] of [["max_procs: 2", undefined], ["max_procs: 1000", 2]] as const) {
    await withDaemon(
      {
        "p/plugin.yaml": manifest("task.placement", "place.sh", `persistent: true, ${pool}`),
        "p/place.sh": slow,
      },
      async (d) => {
        const answers = await Promise.all(
          Array.from({ length: 6 }, () => d.post("/v1/placement", { task: { id: 1 } })),
        );
        for (const answer of answers) {
          assert.deepEqual([answer.target.startsWith("host-"), answer.workdir], [true, "~/w"]);
        }
        const started = await d.pids();
        assert.ok(
          started.length >= 1 && started.length <= 2,
          `${pool}: ${started.length} processes`,
        );
      },
      undefined,
      maxProcs,
    );
  }
});

Deno.test("persistent guard: a reload ends the processes; the next request starts a new one", async () => {
  await withDaemon(GUARD_TREE, async (d) => {
    await d.pre("ls");
    const [first] = await d.pids();
    await d.daemon.reload("test");
    assert.ok(await waitGone(first), "reload left the process running");
    const next = await d.pre("ls");
    const [, second] = await d.pids();
    assert.deepEqual(next, { action: "allow", reason: `ls 1 ${second}` });
  });
});

Deno.test("persistent guard: a stop also ends the processes of an index a reload replaced", async () => {
  // The guard notes each tool it reads, so the test knows "hang" reached the first process, and
  // outlives SIGTERM, so ending it takes the grace period.
  const noting = GUARD
    .replace("#!/bin/sh\n", "#!/bin/sh\ntrap '' TERM\n")
    .replace("hang) sleep 60 ;;", "hang) while :; do sleep 1; done ;;")
    .replace(
      "  n=$((n+1))\n",
      '  n=$((n+1))\n  printf \'%s\\n\' "$line" >> "$TASK_PLUGIN_DIR/seen"\n',
    );
  await withDaemon(
    { "p/plugin.yaml": manifest("pre_tool_call", "g.sh"), "p/g.sh": noting },
    async (d) => {
      await d.pre("ls");
      const [first] = await d.pids();
      const hung = d.pre("hang");
      const seen = join(d.pluginsDir, "p", "seen");
      while (!(await Deno.readTextFile(seen)).includes('"hang"')) {
        await new Promise((r) => setTimeout(r, 10));
      }
      // Replaced while "hang" is in flight: the first index's pool is retiring, not closed.
      await d.daemon.reload("test");
      await d.daemon.stop();
      assert.equal(alive(first), false, "stop returned with the replaced index's process alive");
      assert.equal((await hung).action, "block");
    },
  );
});

Deno.test("serve: SIGTERM ends the persistent processes and leaves none behind", async () => {
  const plugins = await makeTree(GUARD_TREE);
  const socket = await tempSocket();
  const d = await startServe(["--listen", `unix:${socket}`, "--plugins-dir", plugins]);
  try {
    const answer = await d.call("POST", "/v1/tool/pre", { tool: "ls" });
    assert.equal(answer.body.action, "allow");
    const pid = Number((await Deno.readTextFile(join(plugins, "p", "pids"))).trim());
    assert.ok(alive(pid));
    const { code, stderr } = await d.stop("SIGTERM");
    assert.equal(code, 0, stderr);
    assert.ok(await waitGone(pid), "the persistent process outlived the daemon");
  } finally {
    await d.kill();
    await Deno.remove(plugins, { recursive: true });
  }
});

const NOTIFIED = `#!/bin/sh
echo $$ >> "$TASK_PLUGIN_DIR/pids"
while IFS= read -r line; do
  printf '%s\\n' "$line" >> "$TASK_PLUGIN_DIR/seen"
done
`;

async function linesOf(path: string, count: number): Promise<string[]> {
  // Bounded wait for the hook to write them: notifications are answered before they are read.
  for (let i = 0; i < 200; i++) {
    const lines = (await Deno.readTextFile(path).catch(() => "")).split("\n").filter(Boolean);
    if (lines.length >= count) return lines;
    await new Promise((r) => setTimeout(r, 20));
  }
  return (await Deno.readTextFile(path).catch(() => "")).split("\n").filter(Boolean);
}

Deno.test("persistent notifications: post_tool_call and event lines go to one process each, no answer read", async () => {
  await withDaemon({
    "p/plugin.yaml": "name: p\nhooks:\n  post_tool_call: n.sh\n  task.done: n.sh\n" +
      "tyhooks:\n  post_tool_call: {persistent: true}\n  task.done: {persistent: true}\n",
    "p/n.sh": NOTIFIED,
  }, async (d) => {
    for (let i = 0; i < 3; i++) await d.post("/v1/tool/post", { tool: `t${i}` });
    const fired = await d.post("/v1/events/task.done?wait=1", { task: { id: 7 } });
    assert.equal(fired.runs.length, 1);
    assert.equal(fired.runs[0].exit_code, 0);
    assert.equal(fired.runs[0].error, null);
    const lines = await linesOf(join(d.pluginsDir, "p", "seen"), 4);
    assert.equal(lines.length, 4, lines.join("\n"));
    // The three tool posts ran from the event queue side by side: in any order.
    const tools = lines.map((l) => JSON.parse(l)).filter((r) => r.hook === "post_tool_call");
    assert.deepEqual(tools.map((r) => r.tool).sort(), ["t0", "t1", "t2"]);
    assert.ok(lines.some((l) => JSON.parse(l).task?.id === 7));
    // One process for post_tool_call and one for task.done, each started once.
    assert.equal((await d.pids()).length, 2);
  });
});

/**
 * The guard's pool (GUARD, or `script`), asked directly (no HTTP), so requests are written in the
 * order asked.
 */
async function withPool(
  body: (
    ask: (tool: string, timeoutMs?: number, signal?: AbortSignal) => Promise<RunResult>,
  ) => Promise<void>,
  script = GUARD,
): Promise<void> {
  const plugins = await makeTree({ ...GUARD_TREE, "p/g.sh": script });
  const [plugin] = (await loadPlugins(plugins)).plugins;
  const hooks = new PersistentHooks({
    backoff: { initialMs: 10, maxMs: 10, resetAfterMs: 10_000, maxFailures: 100 },
  });
  const ask = (tool: string, timeoutMs = 5000, signal = new AbortController().signal) =>
    hooks.ask({
      event: "pre_tool_call",
      plugin,
      script: plugin.hooks.pre_tool_call,
      stdin: JSON.stringify({ hook: "pre_tool_call", tool }) + "\n",
      timeoutMs,
      graceMs: 200,
      signal,
    }, () => Promise.reject(new Error("asked once instead of through the pool")));
  try {
    await body(ask);
  } finally {
    await hooks.close();
    const pids = (await Deno.readTextFile(join(plugins, "p", "pids")).catch(() => ""))
      .split("\n").filter((l) => l !== "").map(Number);
    await Deno.remove(plugins, { recursive: true });
    for (const pid of pids) assert.ok(await waitGone(pid), `process ${pid} left behind`);
  }
}

const reason = (result: RunResult) => JSON.parse(result.stdout).reason;

Deno.test("persistent hooks: requests written back to back are answered in order", async () => {
  await withPool(async (ask) => {
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => ask(`t${i}`)));
    const pid = results[0].pid;
    results.forEach((result, i) => {
      assert.equal(result.pid, pid);
      assert.equal(reason(result), `t${i} ${i + 1} ${pid}`);
    });
  });
});

Deno.test("persistent hooks: an answer followed by a blank line leaves the requests behind it their own answers", async () => {
  await withPool(async (ask) => {
    // Written back to back: the blank line comes while "a" and "b" wait. Were it an answer, "a"
    // would get it (an empty answer, a guard's allow) and "b" the answer meant for "a".
    const [extra, a, b] = await Promise.all([ask("extra"), ask("a"), ask("b")]);
    const pid = extra.pid;
    assert.equal(reason(extra), `extra 1 ${pid}`);
    assert.equal(reason(a), `a 2 ${pid}`);
    assert.equal(reason(b), `b 3 ${pid}`);
  });
});

Deno.test("persistent hooks: a line that is not JSON before an answer fails that request; the ones behind it are answered by a new process", async () => {
  await withPool(async (ask) => {
    // Were the process kept, "a" would get the answer meant for "chatty", and "b" the one for "a".
    const [chatty, a, b] = await Promise.all([ask("chatty"), ask("a"), ask("b")]);
    assert.equal(chatty.error, "Persistent hook answered a line that is not JSON");
    assert.ok(await waitGone(chatty.pid!), "the process out of step was not ended");
    assert.notEqual(a.pid, chatty.pid);
    assert.equal(reason(a), `a 1 ${a.pid}`);
    assert.equal(reason(b), `b 2 ${a.pid}`);
  });
});

Deno.test("persistent hooks: a JSON line without the request's id (a banner) fails that request; the ones behind it are answered by a new process", async () => {
  // The first process greets before it answers: were it kept, "rm" would get the allow meant
  // for "ls", and "cat" the block meant for "rm".
  const greeting = `#!/bin/sh
[ -e "$TASK_PLUGIN_DIR/greeted" ] || { : > "$TASK_PLUGIN_DIR/greeted"; echo '{"ready":true}'; }
${GUARD.slice("#!/bin/sh\n".length)}`;
  await withPool(async (ask) => {
    const [ls, rm, cat] = await Promise.all([ask("ls"), ask("rm"), ask("cat")]);
    assert.match(
      ls.error ?? "",
      /^Persistent hook answered out of step: it has no "id", the request's is "1"/,
    );
    assert.ok(await waitGone(ls.pid!), "the process out of step was not ended");
    assert.notEqual(rm.pid, ls.pid);
    assert.equal(JSON.parse(rm.stdout).action, "block");
    assert.equal(reason(rm), `rm 1 ${rm.pid}`);
    assert.equal(reason(cat), `cat 2 ${rm.pid}`);
  }, greeting);
});

Deno.test("persistent hooks: a script that exits is seen at once, though a child it left holds stdout open", async () => {
  const leaver = `#!/bin/sh
echo $$ >> "$TASK_PLUGIN_DIR/pids"
sleep 1000 &
echo $! >> "$TASK_PLUGIN_DIR/pids"
IFS= read -r line
exit 3
`;
  await withPool(async (ask) => {
    const result = await ask("ls", 5000);
    assert.equal(result.timed_out, false);
    assert.equal(result.error, "Persistent hook exited 3 before answering");
  }, leaver);
});

Deno.test("persistent hooks: a script that closes stdout and ignores SIGTERM fails the request at its timeout, not after the kill", async () => {
  const closer = `#!/bin/sh
echo $$ >> "$TASK_PLUGIN_DIR/pids"
trap '' TERM
IFS= read -r line
exec >&-
sleep 5
`;
  await withPool(async (ask) => {
    // 300 ms: its stdout closes at once, and SIGTERM leaves it running for the 500 ms grace.
    const result = await ask("ls", 300);
    assert.equal(result.timed_out, true, JSON.stringify(result));
  }, closer);
});

Deno.test("persistent hooks: a timeout in the middle of a pipeline fails that request; the ones behind it are answered by a new process", async () => {
  await withPool(async (ask) => {
    const [first, hung, a, b] = await Promise.all([
      ask("ls"),
      ask("hang", 300),
      ask("a"),
      ask("b"),
    ]);
    assert.equal(reason(first), `ls 1 ${first.pid}`);
    assert.equal(hung.timed_out, true);
    assert.equal(hung.pid, first.pid);
    assert.ok(await waitGone(first.pid!), "the hung process was not killed");
    assert.notEqual(a.pid, first.pid);
    assert.equal(reason(a), `a 1 ${a.pid}`);
    assert.equal(reason(b), `b 2 ${a.pid}`);
  });
});

Deno.test("persistent hooks: a process stuck on a request its caller gave up on is ended at that request's timeout", async () => {
  await withPool(async (ask) => {
    const gaveUp = new AbortController();
    const first = ask("ls");
    const hung = ask("hang", 300, gaveUp.signal);
    // Once the request before it is answered, "hang" has been written: then its caller gives up.
    await first;
    gaveUp.abort();
    assert.equal((await hung).error, "Interrupted");
    // Queued behind the abandoned request: answered by a new process once that one's 300 ms
    // are up, not left to time out after its own 5 s.
    const next = await ask("ls");
    assert.equal(next.timed_out, false);
    assert.equal(reason(next), `ls 1 ${next.pid}`);
    assert.notEqual(next.pid, (await hung).pid);
  });
});

/** Whether `result` is `tool`'s own answer, or a failure for answering out of step. */
function ownOrOutOfStep(result: RunResult, tool: string): boolean {
  if (result.error !== null) return /^Persistent hook answered out of step/.test(result.error);
  return reason(result).startsWith(`${tool} `);
}

Deno.test("persistent hooks: a guard that answers one request twice never hands the second answer to another request", async () => {
  await withPool(async (ask) => {
    const dup = await ask("dup");
    assert.equal(JSON.parse(dup.stdout).action, "block");
    // Written while the second answer ("allow") is still to come: were answers matched by order,
    // "victim1" would be allowed by the answer meant for "dup".
    const [victim1, victim2] = await Promise.all([ask("victim1"), ask("victim2")]);
    for (const [victim, tool] of [[victim1, "victim1"], [victim2, "victim2"]] as const) {
      assert.ok(!victim.stdout.includes("stale"), `${tool} got ${victim.stdout}`);
      assert.ok(ownOrOutOfStep(victim, tool), `${tool}: ${JSON.stringify(victim)}`);
    }
    // The one behind the failed request is asked again, of a new process.
    assert.notEqual(victim2.pid, dup.pid);
    assert.equal(reason(victim2), `victim2 1 ${victim2.pid}`);
  });
});

Deno.test("persistent hooks: an answer without the request's id fails that request; the ones behind it are answered by a new process", async () => {
  await withPool(async (ask) => {
    const [noid, a, b] = await Promise.all([ask("noid"), ask("a"), ask("b")]);
    assert.match(noid.error ?? "", /answered out of step: it has no "id", the request's is "1"/);
    const numeric = await ask("numid");
    assert.match(numeric.error ?? "", /out of step: its "id" is \d+, not a string, the request's/);
    assert.ok(await waitGone(noid.pid!), "the process out of step was not ended");
    assert.notEqual(a.pid, noid.pid);
    assert.equal(reason(a), `a 1 ${a.pid}`);
    assert.equal(reason(b), `b 2 ${a.pid}`);
  });
});
