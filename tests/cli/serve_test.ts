import assert from "node:assert/strict";
import { join } from "node:path";
import { makeTree, RUN_KEYS, tempDir } from "../_cli.ts";
import { type Answer, serveOn, type ServeProcess } from "./_serve.ts";
import { TWINS } from "./_trees.ts";
import { waitForFile } from "../_procs.ts";

/** Asserts that `answer` is `status`, with an error that matches `error`. */
function assertError(answer: Answer, status: number, error: RegExp): void {
  assert.equal(answer.status, status);
  assert.match(answer.body.error, error);
}

/** Plugins for every endpoint; hooks write what they saw under `$OUT`. */
async function pluginTree(): Promise<{ plugins: string; out: string }> {
  const out = await tempDir({ prefix: "tyhooks-out-" });
  const plugins = await makeTree({
    "router/plugin.yaml": "name: router\nhooks:\n  task.route: route.sh\n",
    "router/route.sh":
      '#!/bin/sh\necho "CLAUDE_CONFIG_DIR=/profiles/$TASK_PROJECT"\necho REASON=by project\n',
    "placer/plugin.yaml":
      "name: placer\nhooks:\n  task.placement: place.sh\n  task.hosts: hosts.sh\n",
    "placer/hosts.sh":
      '#!/bin/sh\ngrep -q \'"project":"ml"\' && echo \'{"hosts":[{"name":"gpu1","workdir":"~/w"}]}\'\nexit 0\n',
    "placer/place.sh":
      '#!/bin/sh\ngrep -q \'"remote_required":true\' && echo \'{"target":"gpu1","workdir":"~/w","reason":"remote"}\'\nexit 0\n',
    "guard/plugin.yaml":
      "name: guard\nhooks:\n  pre_tool_call: pre.sh\n  post_tool_call: post.sh\n",
    "guard/pre.sh":
      '#!/bin/sh\nif grep -q "rm -rf"; then echo "no rm" >&2; exit 2; fi\necho \'{"action":"allow","reason":"fine"}\'\n',
    "guard/post.sh": '#!/bin/sh\ncat > "$OUT/post.json"\n',
    "notifier/plugin.yaml":
      "name: notifier\nhooks:\n  task.done: done.sh\n  task.started: started.sh\nactions:\n  - id: hello\n    command: hello.sh\n  - id: fail\n    command: fail.sh\n",
    "notifier/done.sh": '#!/bin/sh\necho "$TASK_ID $TASK_MESSAGE" > "$OUT/done"\n',
    "notifier/started.sh": '#!/bin/sh\necho "$TASK_ID" > "$OUT/started"\n',
    "notifier/hello.sh": '#!/bin/sh\necho "hello $TASK_ID"\necho "to stderr" >&2\n',
    "notifier/fail.sh": "#!/bin/sh\nexit 4\n",
  });
  return { plugins, out };
}

async function withDaemon(fn: (d: ServeProcess, out: string) => Promise<void>): Promise<void> {
  const { plugins, out } = await pluginTree();
  await using d = await serveOn(plugins, [], {
    env: { OUT: out },
  });
  await fn(d, out);
}

Deno.test("serve: GET /v1/health and GET /v1/plugins answer with the documented shapes", async () => {
  await withDaemon(async (d) => {
    const health = await d.call("GET", "/v1/health");
    assert.equal(health.status, 200);
    assert.equal(health.headers.get("content-type"), "application/json");
    assert.deepEqual(Object.keys(health.body).sort(), [
      "ok",
      "plugins",
      "plugins_dir",
      "spool_bytes",
      "spool_depth",
      "uptime_s",
      "version",
    ]);
    assert.equal(health.body.spool_depth, 0);
    assert.equal(health.body.ok, true);
    assert.equal(health.body.plugins, 4);
    assert.equal(typeof health.body.uptime_s, "number");
    const list = await d.call("GET", "/v1/plugins");
    assert.equal(list.status, 200);
    assert.deepEqual(list.body.plugins.map((p: { name: string }) => p.name), [
      "guard",
      "notifier",
      "placer",
      "router",
    ]);
    assert.deepEqual(list.body.warnings, []);
    assert.deepEqual(list.body.plugins[1].actions.map((a: { id: string }) => a.id), [
      "hello",
      "fail",
    ]);
  });
});

Deno.test("serve: POST /v1/route answers the route --json document", async () => {
  await withDaemon(async (d) => {
    const r = await d.call("POST", "/v1/route", { task: { id: 1, project: "web" } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, {
      plugin: "router",
      claude_config_dir: "/profiles/web",
      hold: false,
      reason: "by project",
    });
  });
});

Deno.test("serve: POST /v1/placement answers the place document, remote_required passed on", async () => {
  await withDaemon(async (d) => {
    const local = await d.call("POST", "/v1/placement", { task: { id: 1 } });
    assert.equal(local.status, 200);
    // SPEC: the handler's exit 0 with empty stdout is a deliberate local answer naming it.
    assert.deepEqual(local.body, { target: "", workdir: "", reason: "", handler: "placer" });
    const remote = await d.call("POST", "/v1/placement", {
      task: { id: 1 },
      remote_required: true,
    });
    assert.deepEqual(remote.body, {
      target: "gpu1",
      workdir: "~/w",
      reason: "remote",
      handler: "placer",
    });
  });
});

Deno.test("serve: POST /v1/hosts answers the hosts document", async () => {
  await withDaemon(async (d) => {
    const none = await d.call("POST", "/v1/hosts", { task: { project: "web" } });
    assert.deepEqual([none.status, none.body], [200, { hosts: [] }]);
    const ml = await d.call("POST", "/v1/hosts", { task: { project: "ml" } });
    assert.deepEqual(ml.body, {
      hosts: [{ name: "gpu1", target: "gpu1", workdir: "~/w", detail: "" }],
    });
    const wrong = await d.call("GET", "/v1/hosts");
    assert.equal(wrong.status, 405);
  });
});

Deno.test("serve: POST /v1/events/{event} accepts with 202 and runs the hooks", async () => {
  await withDaemon(async (d, out) => {
    const r = await d.call("POST", "/v1/events/task.done", { task: { id: 5 }, message: "green" });
    assert.equal(r.status, 202);
    assert.deepEqual(r.body, { accepted: true });
    assert.equal(await waitForFile(join(out, "done")), "5 green\n");
  });
});

Deno.test("serve: POST /v1/events/{event}?wait=1 answers the fire --json document", async () => {
  await withDaemon(async (d) => {
    const r = await d.call("POST", "/v1/events/task.done?wait=1", { task: { id: 6 } });
    assert.equal(r.status, 200);
    assert.equal(r.body.event, "task.done");
    assert.equal(r.body.runs.length, 1);
    assert.deepEqual(Object.keys(r.body.runs[0]).sort(), RUN_KEYS);
    assert.equal(r.body.runs[0].plugin, "notifier");
    assert.equal(r.body.runs[0].exit_code, 0);
    const none = await d.call("POST", "/v1/events/nobody.handles?wait=1", {});
    assert.deepEqual(none.body, { event: "nobody.handles", runs: [] });
  });
});

Deno.test("serve: POST /v1/status-change maps the status like status-change does", async () => {
  await withDaemon(async (d, out) => {
    const accepted = await d.call("POST", "/v1/status-change", {
      task: { id: 8 },
      status: "processing",
    });
    assert.equal(accepted.status, 202);
    assert.equal(await waitForFile(join(out, "started")), "8\n");
    const waited = await d.call("POST", "/v1/status-change?wait=1", {
      task: { id: 9 },
      status: "done",
      message: "ok",
    });
    assert.equal(waited.status, 200);
    assert.equal(waited.body.event, "task.done");
    assert.equal(waited.body.runs[0].exit_code, 0);
    const nothing = await d.call("POST", "/v1/status-change?wait=1", { status: "archived" });
    assert.deepEqual(nothing.body, { event: "", runs: [] });
  });
});

Deno.test("serve: POST /v1/actions/{plugin}/{action} answers the plugins run --json record", async () => {
  await withDaemon(async (d) => {
    const r = await d.call("POST", "/v1/actions/notifier/hello", { task: { id: 3 } });
    assert.equal(r.status, 200);
    assert.deepEqual(Object.keys(r.body).sort(), [...RUN_KEYS, "stderr", "stdout"].sort());
    assert.equal(r.body.stdout, "hello 3\n");
    assert.equal(r.body.stderr, "to stderr\n");
    assert.equal(r.body.plugin, "notifier");
    // A failing action is still a record: the exit code is the answer, not an HTTP error.
    const failed = await d.call("POST", "/v1/actions/notifier/fail");
    assert.equal(failed.status, 200);
    assert.equal(failed.body.exit_code, 4);
  });
});

Deno.test("serve: POST /v1/actions/{plugin}/{action} runs the first in path order of two plugins with one name, and its first action of that id", async () => {
  await using d = await serveOn(await makeTree(TWINS));
  const r = await d.call("POST", "/v1/actions/twin/go");
  assert.deepEqual([r.status, r.body.stdout], [200, "first\n"]);
  const list = await d.call("GET", "/v1/plugins");
  assert.deepEqual(list.body.plugins.map((p: { name: string }) => p.name), ["twin", "twin"]);
});

Deno.test("serve: an unknown plugin or action is 404 with an error naming it", async () => {
  await withDaemon(async (d) => {
    const plugin = await d.call("POST", "/v1/actions/ghost/hello");
    assertError(plugin, 404, /Unknown plugin "ghost"/);
    const action = await d.call("POST", "/v1/actions/notifier/ghost");
    assertError(action, 404, /Unknown action "ghost" in plugin "notifier"/);
  });
});

Deno.test("serve: POST /v1/tool/pre answers allow or block; POST /v1/tool/post is 202 and runs", async () => {
  await withDaemon(async (d, out) => {
    const allow = await d.call("POST", "/v1/tool/pre", { tool: "bash", args: { command: "ls" } });
    assert.equal(allow.status, 200);
    assert.deepEqual(allow.body, { action: "allow", reason: "fine" });
    const from = { platform: "claude", user_id: "u1" };
    const rm = { tool: "bash", args: { command: "rm -rf /" }, ...from };
    assert.deepEqual((await d.call("POST", "/v1/tool/pre", rm)).body, {
      action: "block",
      reason: "no rm",
    });
    const ls = { tool: "bash", args: { command: "ls" }, ...from };
    const post = await d.call("POST", "/v1/tool/post", { ...ls, result: "a b", error: "" });
    assert.equal(post.status, 202);
    assert.deepEqual(post.body, { accepted: true });
    const seen = JSON.parse(await waitForFile(join(out, "post.json")));
    assert.equal(seen.hook, "post_tool_call");
    assert.equal(seen.result, "a b");
  });
});

Deno.test("serve: GET /v1/services is an empty list without --services", async () => {
  await withDaemon(async (d) => {
    const r = await d.call("GET", "/v1/services");
    assert.equal(r.status, 200);
    assert.deepEqual(r.body, { services: [] });
  });
});

Deno.test("serve: malformed JSON and a task failing validation are 400 with the reason", async () => {
  await withDaemon(async (d) => {
    const malformed = await d.call("POST", "/v1/route", '{"task": {');
    assertError(malformed, 400, /^Malformed JSON in request body/);
    const badTask = await d.call("POST", "/v1/route", { task: { id: "seven" } });
    assertError(badTask, 400, /"task\.id"/);
    const notObject = await d.call("POST", "/v1/events/task.done", "[1,2]");
    assert.equal(notObject.status, 400);
    const noStatus = await d.call("POST", "/v1/status-change", { task: { id: 1 } });
    assertError(noStatus, 400, /"status"/);
    const noTool = await d.call("POST", "/v1/tool/pre", { args: {} });
    assertError(noTool, 400, /"tool"/);
  });
});

Deno.test("serve: unknown path is 404, wrong method is 405 with Allow", async () => {
  await withDaemon(async (d) => {
    const missing = await d.call("GET", "/v1/nope");
    assertError(missing, 404, /Unknown path "\/v1\/nope"/);
    const wrong = await d.call("GET", "/v1/route");
    assert.equal(wrong.status, 405);
    assert.equal(wrong.headers.get("allow"), "POST");
    assert.match(wrong.body.error, /GET/);
    const wrongGet = await d.call("DELETE", "/v1/health");
    assert.equal(wrongGet.status, 405);
    assert.equal(wrongGet.headers.get("allow"), "GET");
  });
});

Deno.test("serve: a body over 1 MiB is 413, and the daemon keeps serving", async () => {
  await withDaemon(async (d) => {
    const big = JSON.stringify({ task: { id: 1, body: "x".repeat(1024 * 1024) } });
    const r = await d.call("POST", "/v1/route", big);
    assertError(r, 413, /too large/);
    // Streamed without a Content-Length, the cap still holds.
    const stream = new Blob([big]).stream();
    const streamed = await d.fetch("/v1/route", { method: "POST", body: stream });
    assert.equal(streamed.status, 413);
    await streamed.body?.cancel();
    assert.equal((await d.call("GET", "/v1/health")).status, 200);
  });
});

Deno.test("serve: hostile bodies (NUL bytes, deep nesting, a NUL event name) get clean answers", async () => {
  await withDaemon(async (d) => {
    const nul = await d.call("POST", "/v1/route", { task: { id: 1, project: "we\u0000b" } });
    assert.equal(nul.status, 200);
    // The NUL byte cannot reach the environment: it is removed, never a crash.
    assert.equal(nul.body.claude_config_dir, "/profiles/web");
    const deep = '{"task":{"id":1},"x":' + "[".repeat(100_000) + "]".repeat(100_000) + "}";
    assert.equal((await d.call("POST", "/v1/route", deep)).status, 200);
    const deepTask = '{"task":' + '{"a":'.repeat(50_000) + "1" + "}".repeat(50_000) + "}";
    assert.equal((await d.call("POST", "/v1/route", deepTask)).status, 200);
    const event = await d.call("POST", "/v1/events/%00?wait=1", {});
    assert.equal(event.status, 200);
    assert.deepEqual(event.body.runs, []);
    assert.equal((await d.call("GET", "/v1/health")).status, 200);
  });
});

Deno.test("serve: /v1/health names the plugins dir by its real path, though serve was given a link to it", async () => {
  const { plugins } = await pluginTree();
  const link = `${plugins}-link`;
  await Deno.symlink(plugins, link);
  try {
    await using d = await serveOn(link, []);
    const health = await d.call("GET", "/v1/health");
    assert.equal(health.body.plugins_dir, await Deno.realPath(plugins));
  } finally {
    await Deno.remove(link);
  }
});
