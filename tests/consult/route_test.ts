import assert from "node:assert/strict";
import { join } from "node:path";
import { Runner } from "../../lib/hooks/runner.ts";
import { EMPTY_TASK } from "../../lib/wire/task.ts";
import { isEmptyDecision, NO_ROUTE, parseRouteOutput } from "../../lib/consult/route.ts";
import { groupGone, readPid, waitGone } from "../_procs.ts";
import { shScript } from "../_cli.ts";
import { handling, recordingRunner, traceDir } from "../_index.ts";

const TASK = {
  ...EMPTY_TASK,
  id: 12,
  title: "Fix login",
  executor: "claude",
  claude_config_dir: "",
};

function routerRunner(routers: Record<string, string>, options: { routeMs?: number } = {}) {
  const timeouts = options.routeMs ? { route: options.routeMs } : {};
  return recordingRunner(handling("task.route", routers), { timeouts });
}

Deno.test("route() returns the third router's decision after a silent one and a failing one that printed a config dir", async () => {
  const { runner, lines } = await routerRunner({
    "a-silent": "#!/bin/sh\nexit 0\n",
    "b-failing": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/wrong\nexit 1\n",
    "c-answers":
      `#!/bin/sh\nprintf '# chosen by load\\r\\nclaude_config_dir = "/p/work"\\r\\nREASON=second profile is idle\\r\\n'\n`,
  });
  const decision = await runner.route(TASK);
  assert.deepEqual(decision, {
    plugin: "c-answers",
    claude_config_dir: "/p/work",
    hold: false,
    reason: "second profile is idle",
  });
  const warning = lines.find((l) => l.level === "warn" && l.plugin === "b-failing");
  assert.ok(warning, "the failing router is logged as a warning");
  assert.match(warning.msg, /Router "b-failing" skipped: exited 1/);
});

Deno.test("route() skips a router whose answer is over the output cap, saying so: its HOLD past the cap is never lost silently", async () => {
  const { runner, lines } = await routerRunner({
    a: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/safe\nprintf 'REASON=%1100000s\\n' x\necho HOLD=1\n",
  });
  assert.deepEqual(await runner.route(TASK), NO_ROUTE);
  const warning = lines.find((l) => l.level === "warn" && l.plugin === "a");
  assert.ok(warning, "the cut router is logged as a warning");
  assert.match(
    warning.msg,
    /Router "a" skipped: its answer of 11000\d\d bytes is over the output cap/,
  );
});

Deno.test("route() returns a HOLD or DEFER decision without a config dir", async () => {
  for (const line of ["HOLD=1", "DEFER=yes", "hold=on", "Defer='true'"]) {
    const { runner } = await routerRunner({ r: `#!/bin/sh\necho '${line}'\necho REASON=quota\n` });
    assert.deepEqual(
      await runner.route(TASK),
      { plugin: "r", claude_config_dir: "", hold: true, reason: "quota" },
      line,
    );
  }
});

Deno.test("route() treats a decision with only REASON as empty and asks the next router", async () => {
  const { runner } = await routerRunner({
    a: "#!/bin/sh\necho REASON=no opinion\n",
    b: "#!/bin/sh\necho HOLD=no\necho REASON=not holding either\n",
  });
  assert.deepEqual(await runner.route(TASK), NO_ROUTE);
  const { runner: second } = await routerRunner({
    a: "#!/bin/sh\necho REASON=no opinion\n",
    b: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/b\n",
  });
  assert.deepEqual(await second.route(TASK), {
    plugin: "b",
    claude_config_dir: "/p/b",
    hold: false,
    reason: "",
  });
});

Deno.test("route() gives routers TASK_EXECUTOR and TASK_CLAUDE_CONFIG_DIR with the event variables", async () => {
  const { runner } = await routerRunner({
    r: shScript(
      'echo "CLAUDE_CONFIG_DIR=$TASK_CLAUDE_CONFIG_DIR-routed"',
      'echo "REASON=$TASK_EXECUTOR $TASK_EVENT $TASK_ID $TASK_PLUGIN_NAME $(pwd)"',
    ),
  });
  // SPEC: a task naming its own config dir is routed only with force.
  const decision = await runner.route({ ...TASK, claude_config_dir: "/p/default" }, {
    force: true,
  });
  assert.equal(decision.claude_config_dir, "/p/default-routed");
  assert.equal(decision.reason, `claude task.route 12 r ${runner.index.plugins[0].dir}`);
});

Deno.test("route() never parses a router's stderr", async () => {
  const { runner, lines } = await routerRunner({
    r: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/stderr >&2\n",
  });
  assert.deepEqual(await runner.route(TASK), NO_ROUTE);
  assert.ok(lines.some((l) => l.level === "debug" && String(l.stderr).includes("/p/stderr")));
});

Deno.test("route() skips a router that cannot start or times out, with a warning naming it", async () => {
  const { runner, lines } = await routerRunner({
    a: "#!/nonexistent/interpreter\necho CLAUDE_CONFIG_DIR=/p/a\n",
    b: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/b\nexec sleep 30\n",
    c: "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/c\n",
  });
  // Only the hung router gets a short timeout (its own setting): all three start at once.
  runner.index.plugins.find((p) => p.name === "b")!.settings = {
    "task.route": { timeoutMs: 300 },
  };
  assert.equal((await runner.route(TASK, { deadlineMs: 5000 })).plugin, "c");
  const warned = lines.filter((l) => l.level === "warn").map((l) => [l.plugin, l.msg]);
  assert.equal(warned.length, 2);
  assert.match(String(warned[0][1]), /Router "a" skipped: Cannot start "[^"]*task.route.sh"/);
  assert.match(String(warned[1][1]), /Router "b" skipped: timed out after 300 ms/);
});

Deno.test("route() keeps an answer whose router left a child holding stdout, and ends the child", async () => {
  const trace = await traceDir();
  const { runner } = await routerRunner({
    r: `#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/r\nsleep 30 &\necho $! > ${trace}/child\n`,
  });
  assert.equal((await runner.route(TASK)).claude_config_dir, "/p/r");
  assert.ok(await waitGone(await readPid(join(trace, "child")), 1000));
});

Deno.test("route() returns within its deadline + 1 s when a router escapes with setsid holding stdout", async () => {
  const trace = await traceDir();
  const { runner } = await routerRunner({
    r: shScript(
      "echo CLAUDE_CONFIG_DIR=/p/escaped",
      `setsid sh -c 'echo $$ > ${trace}/escapee; exec sleep 5' &`,
      `echo $$ > ${trace}/router`,
    ),
  });
  const started = performance.now();
  const decision = await runner.route(TASK, { deadlineMs: 1000 });
  const elapsed = performance.now() - started;
  const escapee = await readPid(join(trace, "escapee"));
  Deno.kill(escapee, "SIGKILL");
  assert.equal(decision.claude_config_dir, "/p/escaped");
  assert.ok(elapsed < 2000, `returned after ${Math.round(elapsed)} ms`);
  assert.ok(groupGone(await readPid(join(trace, "router"))));
});

Deno.test("route() with three hung routers returns within the route timeout + 1 s (all asked at once) and leaves no group behind", async () => {
  const trace = await traceDir();
  const hung = `#!/bin/sh\necho $$ > ${trace}/$TASK_PLUGIN_NAME\nsleep 30 &\nexec sleep 30\n`;
  const { runner, lines } = await routerRunner({ a: hung, b: hung, c: hung }, { routeMs: 1000 });
  const started = performance.now();
  const decision = await runner.route(TASK);
  const elapsed = performance.now() - started;
  assert.deepEqual(decision, NO_ROUTE);
  assert.ok(elapsed < 2000, `returned after ${Math.round(elapsed)} ms`);
  const pids = [];
  for (const name of ["a", "b", "c"]) {
    const text = await Deno.readTextFile(join(trace, name)).catch(() => "");
    if (text) pids.push(Number(text));
  }
  assert.ok(pids.length >= 1);
  for (const pid of pids) assert.ok(groupGone(pid), `group ${pid} is gone`);
  // SPEC (one consult loop): every router is started at once, each with its own timeout.
  const timedOut = lines.filter((l) => /timed out after 1000 ms/.test(l.msg));
  assert.deepEqual(timedOut.map((l) => l.plugin), ["a", "b", "c"], "each router is logged");
});

Deno.test("handlesRoute() says whether any plugin routes", async () => {
  assert.equal(new Runner({ dir: "/none", plugins: [], warnings: [] }).handlesRoute(), false);
  const { runner } = await routerRunner({ r: "#!/bin/sh\n" });
  assert.equal(runner.handlesRoute(), true);
  assert.equal(runner.hasPlacementHandler(), false);
});

Deno.test("parseRouteOutput() reads the three keys, case-insensitive and trimmed", () => {
  const d = parseRouteOutput("  claude_config_dir =  /p/work \nHold=1\n reason = busy day \n");
  assert.deepEqual(d, { claude_config_dir: "/p/work", hold: true, reason: "busy day" });
});

Deno.test("parseRouteOutput() skips blank lines, # comments and lines without =", () => {
  const d = parseRouteOutput("\n# CLAUDE_CONFIG_DIR=/commented\n   \njust talking\nREASON=ok\n");
  assert.deepEqual(d, { claude_config_dir: "", hold: false, reason: "ok" });
});

Deno.test("parseRouteOutput() accepts CRLF line endings", () => {
  const d = parseRouteOutput("CLAUDE_CONFIG_DIR=/p/a\r\nREASON=windows\r\n");
  assert.deepEqual(d, { claude_config_dir: "/p/a", hold: false, reason: "windows" });
});

Deno.test("parseRouteOutput() strips one pair of surrounding quotes after trimming", () => {
  assert.equal(
    parseRouteOutput('CLAUDE_CONFIG_DIR= "/p/with space" ').claude_config_dir,
    "/p/with space",
  );
  assert.equal(parseRouteOutput("REASON='single'").reason, "single");
  assert.equal(parseRouteOutput(`REASON="'inner kept'"`).reason, "'inner kept'");
  assert.equal(parseRouteOutput(`REASON="unbalanced'`).reason, `"unbalanced'`);
  assert.equal(parseRouteOutput(`REASON="`).reason, `"`);
  assert.equal(parseRouteOutput(`REASON=""`).reason, "");
});

Deno.test("parseRouteOutput() keeps = signs inside a value", () => {
  assert.equal(parseRouteOutput("REASON=a=b=c").reason, "a=b=c");
});

Deno.test("parseRouteOutput() takes HOLD or DEFER as truthy for 1, true, yes, y, on in any case", () => {
  for (const key of ["HOLD", "DEFER", "hold", "Defer"]) {
    // Trimmed again after the quotes go, as ty's isTruthy does.
    for (
      const value of ["1", "true", "yes", "y", "on", "TRUE", "Yes", "Y", "ON", '"on"', '" yes "']
    ) {
      assert.equal(parseRouteOutput(`${key}=${value}`).hold, true, `${key}=${value}`);
    }
    for (const value of ["0", "false", "no", "off", "", "2", "held"]) {
      assert.equal(parseRouteOutput(`${key}=${value}`).hold, false, `${key}=${value}`);
    }
  }
});

Deno.test("parseRouteOutput() ignores unknown keys, and the last of a repeated key wins", () => {
  const d = parseRouteOutput("PROFILE=/x\nCLAUDE_CONFIG_DIR=/first\nCLAUDE_CONFIG_DIR=/second\n");
  assert.equal(d.claude_config_dir, "/second");
  assert.equal(parseRouteOutput("HOLD=1\nDEFER=no").hold, false);
});

Deno.test("isEmptyDecision() is true unless the decision holds or names a config dir", () => {
  assert.ok(isEmptyDecision(parseRouteOutput("REASON=only a reason\n")));
  assert.ok(isEmptyDecision(parseRouteOutput("")));
  assert.ok(!isEmptyDecision(parseRouteOutput("DEFER=y\n")));
  assert.ok(!isEmptyDecision(parseRouteOutput("CLAUDE_CONFIG_DIR=/p\n")));
  // Blank is none, as in ty (strings.TrimSpace): the next router is asked.
  assert.ok(isEmptyDecision(parseRouteOutput('CLAUDE_CONFIG_DIR="  "\n')));
});

Deno.test("route() skips a router that answers a blank config dir, and trims the one it returns before ~ is expanded", async () => {
  const { runner } = await routerRunner({
    "a-blank": `#!/bin/sh\necho 'CLAUDE_CONFIG_DIR="  "'\n`,
    "b-padded": `#!/bin/sh\necho 'CLAUDE_CONFIG_DIR=" ~/work/ "'\n`,
  });
  const decision = await runner.route(TASK);
  assert.equal(decision.plugin, "b-padded");
  assert.equal(decision.claude_config_dir, `${Deno.env.get("HOME")}/work`);
});

Deno.test("route() replaces a leading ~ of the answered dir with $HOME whatever follows it, then cleans it, as ty's executor does", async () => {
  const home = Deno.env.get("HOME")!;
  const cases: [string, string][] = [
    ["~bob/.claude", `${home}/bob/.claude`],
    ["~~x", `${home}/~x`],
    ["~", home],
    ["~/", home],
    ["~/.claude-work/../work/", `${home}/work`],
    ["/profiles/~bob", "/profiles/~bob"],
  ];
  for (const [answered, used] of cases) {
    const { runner } = await routerRunner({
      r: `#!/bin/sh\necho 'CLAUDE_CONFIG_DIR=${answered}'\n`,
    });
    assert.equal((await runner.route(TASK)).claude_config_dir, used, answered);
  }
});
