import assert from "node:assert/strict";
import { join } from "node:path";
import { Runner } from "../../lib/hooks/runner.ts";
import { EMPTY_TASK } from "../../lib/wire/task.ts";
import { LOCAL_PLACEMENT } from "../../lib/consult/placement.ts";
import { groupGone, readPid, waitGone, waitGroupGone } from "../_procs.ts";
import { shScript } from "../_cli.ts";
import { handling, recordingRunner, traceDir } from "../_index.ts";

const TASK = {
  ...EMPTY_TASK,
  id: 31,
  title: "Train model",
  body: "secret body",
  project: "ml",
  repo_path: "/src/ml",
  executor: "codex",
};

const ALL_EMPTY = { target: "", workdir: "", reason: "", handler: "" };

function placementRunner(handlers: Record<string, string>, placementMs?: number) {
  const timeouts = placementMs ? { placement: placementMs } : {};
  return recordingRunner(handling("task.placement", handlers), { timeouts });
}

const answer = (json: string) => `#!/bin/sh\ncat >/dev/null\necho '${json}'\n`;

Deno.test("resolvePlacement() sends id, title, project, repo_path and executor on stdin, and as ty only TASK_EVENT and the plugin variables in the environment", async () => {
  const trace = await traceDir();
  const env =
    "$TASK_EVENT $TASK_PLUGIN_NAME ${TASK_ID-none} ${TASK_TITLE-none} ${WORKTREE_PATH-none}";
  const { runner } = await placementRunner({
    p: `#!/bin/sh\ncat > ${trace}/request\necho "${env}" > ${trace}/env\n`,
  });
  // SPEC: exit 0 with empty stdout is a deliberate local answer naming its handler.
  assert.deepEqual(await runner.resolvePlacement(TASK), { ...LOCAL_PLACEMENT, handler: "p" });
  const sent = JSON.parse(await Deno.readTextFile(join(trace, "request")));
  // First the request's own id, which a persistent hook echoes.
  assert.match(sent.id, /^\d+$/);
  assert.deepEqual(sent, {
    id: sent.id,
    event: "task.placement",
    task: { id: 31, title: "Train model", project: "ml", repo_path: "/src/ml", executor: "codex" },
  });
  assert.equal(await Deno.readTextFile(join(trace, "env")), "task.placement p none none none\n");
  await runner.resolvePlacement({ ...TASK, remote_required: true });
  const request = JSON.parse(await Deno.readTextFile(join(trace, "request")));
  assert.equal(request.task.remote_required, true);
});

Deno.test("resolvePlacement() returns the first named target, trimmed, with ~ left alone, and ends the later handlers", async () => {
  const trace = await traceDir();
  const { runner } = await placementRunner({
    a: answer('{"target":"","reason":"a would keep it local"}'),
    b: answer('{"target":" gpu-1 ","workdir":"~/src/ml","reason":"most free memory","cost":3}'),
    c: `#!/bin/sh\necho $$ > ${trace}/c\nsleep 30\necho '{"target":"gpu-2"}'\n`,
  });
  assert.deepEqual(await runner.resolvePlacement(TASK), {
    target: "gpu-1",
    workdir: "~/src/ml",
    reason: "most free memory",
    handler: "b",
  });
  // SPEC (one consult loop): c may have been started with the others; it is terminated once b
  // settles the call.
  const c = await Deno.readTextFile(join(trace, "c")).catch(() => "");
  if (c !== "") assert.ok(groupGone(Number(c)), "c's group is gone");
});

Deno.test("resolvePlacement() logs malformed JSON, wrong types, crashes and timeouts at error level with the plugin's name, and falls back to local", async () => {
  const { runner, lines } = await placementRunner({
    a: answer("{oops"),
    b: answer('{"target":7,"workdir":"/w"}'),
    c: '#!/bin/sh\necho \'{"target":"crashed"}\'\nkill -9 $$\n',
    d: '#!/bin/sh\necho \'{"target":"failed"}\'\nexit 3\n',
    e: "#!/bin/sh\nexec sleep 30\n",
    f: answer("[]"),
  });
  // Only the sleeper gets a short timeout (its own setting): all six start at once, and on a
  // busy machine the others may need more than 300 ms.
  runner.index.plugins.find((p) => p.name === "e")!.settings = {
    "task.placement": { timeoutMs: 300 },
  };
  assert.deepEqual(await runner.resolvePlacement(TASK, { deadlineMs: 10_000 }), LOCAL_PLACEMENT);
  const errors = lines.filter((l) => l.level === "error");
  assert.deepEqual(errors.map((l) => l.plugin), ["a", "b", "c", "d", "e", "f"]);
  const reasons = errors.map((l) => l.msg);
  assert.match(reasons[0], /^Placement handler "a" failed: malformed JSON/);
  assert.match(
    reasons[1],
    /^Placement handler "b" failed: wrong answer: "target": expected a string, got 7/,
  );
  assert.match(reasons[2], /^Placement handler "c" failed: killed by SIGKILL/);
  assert.match(reasons[3], /^Placement handler "d" failed: exited 3/);
  assert.match(reasons[4], /^Placement handler "e" failed: timed out after 300 ms/);
  assert.match(
    reasons[5],
    /^Placement handler "f" failed: wrong answer: expected an object, got an array/,
  );
});

Deno.test("resolvePlacement() returns the first deliberate local answer with its reason as written when nobody names a target", async () => {
  const { runner } = await placementRunner({
    a: "#!/bin/sh\ncat >/dev/null\nexit 1\n",
    b: answer('{"target":"","workdir":"","reason":"  small task, keep it local "}'),
    c: answer('{"target":null,"reason":"second local answer"}'),
    d: answer("{bad"),
  });
  assert.deepEqual(await runner.resolvePlacement(TASK), {
    ...ALL_EMPTY,
    reason: "  small task, keep it local ",
    handler: "b",
  });
});

Deno.test("resolvePlacement() with no handler answers all-empty", async () => {
  const runner = new Runner({ dir: "/none", plugins: [], warnings: [] });
  assert.equal(runner.hasPlacementHandler(), false);
  assert.deepEqual(await runner.resolvePlacement(TASK), ALL_EMPTY);
});

Deno.test("resolvePlacement() keeps the answer of a handler whose background probe holds its stdout, and ends the probe", async () => {
  const trace = await traceDir();
  const { runner } = await placementRunner({
    p: shScript(
      "cat >/dev/null",
      `echo '{"target":"h1","workdir":"/w"}'`,
      "sleep 30 &",
      `echo $! > ${trace}/probe`,
      `echo $$ > ${trace}/handler`,
    ),
  });
  const placed = await runner.resolvePlacement(TASK);
  assert.deepEqual([placed.target, placed.handler], ["h1", "p"]);
  assert.ok(await waitGone(await readPid(join(trace, "probe")), 1000));
  assert.ok(groupGone(await readPid(join(trace, "handler"))));
});

Deno.test("resolvePlacement() returns within its deadline + 1 s when handlers ignore SIGTERM and hang with children", async () => {
  const trace = await traceDir();
  const stubborn = shScript(
    "trap '' TERM",
    `echo $$ > ${trace}/$TASK_PLUGIN_NAME`,
    "sleep 30 &",
    "while :; do sleep 0.05; done",
  );
  const { runner, lines } = await placementRunner({ a: stubborn, b: stubborn, c: stubborn });
  const started = performance.now();
  const placed = await runner.resolvePlacement(TASK, { deadlineMs: 800 });
  const elapsed = performance.now() - started;
  assert.deepEqual(placed, LOCAL_PLACEMENT);
  assert.ok(elapsed < 1800, `returned after ${Math.round(elapsed)} ms`);
  const pgid = await readPid(join(trace, "a"));
  // Its members ignore SIGTERM: the SIGKILL they get takes effect asynchronously.
  assert.ok(await waitGroupGone(pgid), "the handler's group is gone");
  // SPEC (one consult loop): all three ran at once; each counts as not answering.
  assert.ok(lines.some((l) => l.plugin === "c" && /did not answer within the 800 ms/.test(l.msg)));
});

Deno.test("resolvePlacement() says a handler's answer over the output cap was cut, and falls back to local", async () => {
  const big = `#!/bin/sh\ncat >/dev/null\nprintf '{"target":"h","reason":"'\n` +
    `printf '%1100000s' | tr ' ' x\nprintf '"}'\n`;
  const { runner, lines } = await placementRunner({ a: big });
  assert.deepEqual(await runner.resolvePlacement(TASK, { deadlineMs: 10_000 }), LOCAL_PLACEMENT);
  const errors = lines.filter((l) => l.level === "error").map((l) => l.msg);
  assert.match(
    errors[0],
    /^Placement handler "a" failed: its answer of 11000\d\d bytes is over the output cap/,
  );
});
