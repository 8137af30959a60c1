import assert from "node:assert/strict";
import { join } from "node:path";
import { writeTree } from "../_cli.ts";
import { groupGone } from "../_procs.ts";
import { toolHooks, traceDir } from "../_index.ts";

const CALL = { tool: "bash", args: { command: "rm -rf /" }, platform: "cli", user_id: "u1" };

/** Writes `scripts` (name -> text) into a temp dir and returns their paths, in order. */
async function scriptPaths(scripts: Record<string, string>): Promise<string[]> {
  const dir = await traceDir();
  await writeTree(dir, scripts);
  return Object.keys(scripts).map((name) => join(dir, name));
}

Deno.test("preToolCall() allows when no hook is configured", async () => {
  const { hooks } = await toolHooks({});
  assert.equal(hooks.hasPreHook(), false);
  assert.equal(hooks.hasPostHook(), false);
  assert.deepEqual(await hooks.preToolCall(CALL), { action: "allow", reason: "" });
});

Deno.test("preToolCall() allows on exit 0 with empty stdout, and on an allow answer", async () => {
  const preHooks = await scriptPaths({
    "quiet.sh": "#!/bin/sh\ncat >/dev/null\n",
    "allow.sh": `#!/bin/sh\necho '{"action":"allow","reason":"read-only"}'\n`,
  });
  const { hooks } = await toolHooks({}, { preHooks });
  assert.equal(hooks.hasPreHook(), true);
  assert.deepEqual(await hooks.preToolCall(CALL), { action: "allow", reason: "read-only" });
});

Deno.test("preToolCall() blocks with the reason of a JSON block answer", async () => {
  const { hooks } = await toolHooks({
    guard: { pre_tool_call: `#!/bin/sh\necho '{"action":"block","reason":"no rm -rf"}'\n` },
  });
  assert.deepEqual(await hooks.preToolCall(CALL), {
    action: "block",
    reason: "no rm -rf",
    by: "guard",
  });
});

Deno.test("preToolCall() blocks on exit 2 with the trimmed stderr as the reason", async () => {
  const { hooks } = await toolHooks({
    guard: { pre_tool_call: "#!/bin/sh\necho '  destructive command  ' >&2\nexit 2\n" },
  });
  assert.deepEqual(await hooks.preToolCall(CALL), {
    action: "block",
    reason: "destructive command",
    by: "guard",
  });
});

const FAILING: Record<string, [string, RegExp]> = {
  "exit 1": ["#!/bin/sh\nexit 1\n", /exited 1/],
  "timeout": ["#!/bin/sh\nexec sleep 30\n", /timed out after \d+ ms/],
  "malformed JSON": ["#!/bin/sh\necho '{action: block'\n", /malformed JSON/],
  "unknown action": [
    `#!/bin/sh\necho '{"action":"maybe"}'\n`,
    /"action": expected "allow", "block" or "ask", got "maybe"/,
  ],
};

for (const [what, [script, why]] of Object.entries(FAILING)) {
  Deno.test(`preToolCall() blocks on ${what} by default, and allows with onFailure allow`, async () => {
    const { hooks, lines } = await toolHooks({ guard: { pre_tool_call: script } }, { toolMs: 300 });
    const blocked = await hooks.preToolCall(CALL);
    assert.equal(blocked.action, "block");
    assert.match(blocked.reason, /hook of plugin "guard" failed/);
    assert.match(blocked.reason, why);
    assert.ok(lines.some((l) => l.level === "error" && l.plugin === "guard"));
    const allowed = await hooks.preToolCall(CALL, { onFailure: "allow" });
    assert.equal(allowed.action, "allow");
    assert.match(allowed.reason, why);
    const { hooks: lenient } = await toolHooks({ guard: { pre_tool_call: script } }, {
      toolMs: 300,
      onFailure: "allow",
    });
    assert.equal((await lenient.preToolCall(CALL)).action, "allow");
  });
}

Deno.test("preToolCall() asks the explicit hook first, then plugins by name, and stops at the first block", async () => {
  const trace = await traceDir();
  const note = (name: string, rest: string) =>
    `#!/bin/sh\necho ${name} >> ${trace}/order\n${rest}\n`;
  const preHooks = await scriptPaths({ "explicit.sh": note("explicit", "") });
  const { hooks } = await toolHooks({
    "z-late": { pre_tool_call: note("z-late", "") },
    "a-first": { pre_tool_call: note("a-first", `echo '{"action":"allow"}'`) },
    "m-blocks": { pre_tool_call: note("m-blocks", "echo 'not today' >&2; exit 2") },
  }, { preHooks });
  const blocked = { action: "block", reason: "not today", by: "m-blocks" };
  assert.deepEqual(await hooks.preToolCall(CALL), blocked);
  // SPEC (one consult loop): all hooks start at once, so the order they ran in is not fixed;
  // the decision is still taken in order. Sequentially, ty's order is kept and z-late never runs.
  const ran = (await Deno.readTextFile(join(trace, "order"))).trim().split("\n").sort();
  for (const name of ["a-first", "explicit", "m-blocks"]) assert.ok(ran.includes(name), name);
  await Deno.remove(join(trace, "order"));
  assert.deepEqual(await hooks.preToolCall(CALL, { sequential: true }), blocked);
  assert.equal(await Deno.readTextFile(join(trace, "order")), "explicit\na-first\nm-blocks\n");
});

Deno.test("preToolCall() returns once a first guard blocks, ending a later hook that would run for 20 s", async () => {
  const trace = await traceDir();
  const { hooks } = await toolHooks({
    // Blocks once b runs, so that b is surely running when the outcome settles.
    a: {
      pre_tool_call:
        `#!/bin/sh\nwhile [ ! -s ${trace}/b ]; do sleep 0.05; done\necho no >&2\nexit 2\n`,
    },
    b: {
      pre_tool_call:
        `#!/bin/sh\necho $$ > ${trace}/b.tmp\nmv ${trace}/b.tmp ${trace}/b\nexec sleep 20\n`,
    },
  }, { toolMs: 30_000 });
  const started = performance.now();
  const verdict = await hooks.preToolCall(CALL);
  const elapsed = performance.now() - started;
  assert.deepEqual(verdict, { action: "block", reason: "no", by: "a" });
  assert.ok(elapsed < 10_000, `returned after ${Math.round(elapsed)} ms`);
  assert.ok(groupGone(Number(await Deno.readTextFile(join(trace, "b")))));
});

Deno.test("preToolCall() with onFailure allow still blocks on a later guard after an earlier one crashed or allowed with a reason", async () => {
  for (
    const first of [
      "#!/bin/sh\nexit 1\n",
      `#!/bin/sh\necho '{"action":"allow","reason":"looks fine to me"}'\n`,
    ]
  ) {
    const { hooks } = await toolHooks({
      a: { pre_tool_call: first },
      b: { pre_tool_call: "#!/bin/sh\necho 'not rm -rf' >&2\nexit 2\n" },
    }, { onFailure: "allow" });
    const blocked = { action: "block", reason: "not rm -rf", by: "b" };
    assert.deepEqual(await hooks.preToolCall(CALL), blocked);
    assert.deepEqual(await hooks.preToolCall(CALL, { sequential: true }), blocked);
  }
});

Deno.test("preToolCall() sends hook, tool, args, platform and user_id on stdin", async () => {
  const trace = await traceDir();
  const { hooks } = await toolHooks({
    guard: { pre_tool_call: `#!/bin/sh\ncat > ${trace}/request\n` },
  });
  await hooks.preToolCall(CALL);
  const sent = JSON.parse(await Deno.readTextFile(join(trace, "request")));
  // First the request's own id, which a persistent hook echoes.
  assert.match(sent.id, /^\d+$/);
  assert.deepEqual(sent, { id: sent.id, hook: "pre_tool_call", ...CALL });
});

Deno.test("preToolCall() and postToolCall() also send the agent's cwd and agent when the call has them", async () => {
  const trace = await traceDir();
  const postHooks = await scriptPaths({ "post.sh": `#!/bin/sh\ncat > ${trace}/post\n` });
  const { hooks } = await toolHooks({
    guard: { pre_tool_call: `#!/bin/sh\ncat > ${trace}/pre\n` },
  }, { postHooks });
  const agent = { name: "gemini", event: "BeforeTool", session_id: "s", input: { x: [1] } };
  await hooks.preToolCall({ ...CALL, cwd: "/work", agent });
  const pre = JSON.parse(await Deno.readTextFile(join(trace, "pre")));
  assert.deepEqual(pre, { id: pre.id, hook: "pre_tool_call", ...CALL, cwd: "/work", agent });
  await hooks.postToolCall({ ...CALL, result: "r", cwd: "/work", agent });
  const post = JSON.parse(await Deno.readTextFile(join(trace, "post")));
  assert.deepEqual(post, { hook: "post_tool_call", ...CALL, result: "r", cwd: "/work", agent });
});

Deno.test("preToolCall() under its default deadline returns within it + 1 s with three hung hooks, failing closed", async () => {
  const trace = await traceDir();
  const hung = `#!/bin/sh\necho $$ > ${trace}/$TASK_PLUGIN_NAME\nexec sleep 30\n`;
  const { hooks } = await toolHooks({
    a: { pre_tool_call: hung },
    b: { pre_tool_call: hung },
    c: { pre_tool_call: hung },
  }, { toolMs: 1000, onFailure: "allow" });
  const started = performance.now();
  const verdict = await hooks.preToolCall(CALL);
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 2000, `returned after ${Math.round(elapsed)} ms`);
  assert.equal(verdict.action, "allow");
  assert.ok(groupGone(Number(await Deno.readTextFile(join(trace, "a")))));
  const closed = await hooks.preToolCall(CALL, { onFailure: "block" });
  assert.equal(closed.action, "block");
  assert.match(closed.reason, /hook of plugin "a" failed: timed out/);
});

Deno.test("postToolCall() sends hook, tool, args, result, platform and user_id, and error only when there is one", async () => {
  const trace = await traceDir();
  const postHooks = await scriptPaths({ "post.sh": `#!/bin/sh\ncat > ${trace}/request\n` });
  const { hooks } = await toolHooks({}, { postHooks });
  assert.equal(hooks.hasPostHook(), true);
  await hooks.postToolCall({ ...CALL, result: "deleted", error: "" });
  const request = JSON.parse(await Deno.readTextFile(join(trace, "request")));
  assert.deepEqual(request, { hook: "post_tool_call", ...CALL, result: "deleted" });
  assert.ok(!("error" in request));
  await hooks.postToolCall({ ...CALL, result: "", error: "permission denied" });
  const failed = JSON.parse(await Deno.readTextFile(join(trace, "request")));
  assert.equal(failed.error, "permission denied");
});

Deno.test("postToolCall() runs every post hook at once and logs failures without throwing", async () => {
  const trace = await traceDir();
  // Each waits for the other's mark: run one after the other, the first would time out.
  const meet = (me: string, other: string) =>
    `#!/bin/sh\ntouch ${trace}/${me}\nfor i in $(seq 100); do [ -e ${trace}/${other} ] && exit 0; sleep 0.02; done\nexit 1\n`;
  const { hooks, lines } = await toolHooks({
    a: { post_tool_call: meet("a", "b") },
    b: { post_tool_call: meet("b", "a") },
    c: { post_tool_call: "#!/bin/sh\nexit 5\n" },
  });
  const runs = await hooks.postToolCall({ ...CALL, result: "ok" });
  assert.deepEqual(runs.map((r) => [r.plugin, r.exit_code]), [["a", 0], ["b", 0], ["c", 5]]);
  assert.ok(lines.some((l) => l.level === "warn" && l.plugin === "c" && /exited 5/.test(l.msg)));
});
