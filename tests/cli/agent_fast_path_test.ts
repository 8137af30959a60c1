/**
 * The agent fast path: `tyhooks agent AGENT` handing its call to a daemon that serves the same
 * plugins dir, and deciding in-process whenever that daemon cannot be trusted or does not answer;
 * and the daemon's `POST /v1/agent/{agent}` in both of its forms.
 *
 * Who decided is told by the guard itself: it runs with the environment of the process that
 * runs it, and the daemon and the client are given different `WHO`s.
 */

import assert from "node:assert/strict";
import { dirname, join } from "node:path";
import { cli, makeTree, tempDir } from "../_cli.ts";
import { serveOn, tempSocket } from "./_serve.ts";
import { agentPayload, fileLines, waitGone } from "../_procs.ts";
import { sleep } from "../../lib/async.ts";

// Blocks every call, saying who ran it (the daemon or the client) and from which process.
const GUARD = `#!/bin/sh
cat >/dev/null
echo "{\\"action\\":\\"block\\",\\"reason\\":\\"$WHO $$\\"}"
`;

// The same, as a persistent guard: one process answers every call, one line each.
const PERSISTENT_GUARD = `#!/bin/sh
while IFS= read -r line; do
  id=\${line#*'"id":"'}; id=\${id%%'"'*}
  echo "{\\"id\\":\\"$id\\",\\"action\\":\\"block\\",\\"reason\\":\\"$WHO $$\\"}"
done
`;

async function guardPlugins(persistent = false): Promise<string> {
  return await makeTree({
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n" +
      (persistent ? "tyhooks:\n  pre_tool_call: {persistent: true}\n" : ""),
    "g/guard.sh": persistent ? PERSISTENT_GUARD : GUARD,
  });
}

async function daemonFor(plugins: string) {
  const home = await tempDir();
  return await serveOn(plugins, ["--hooks-dir", join(home, "none")], {
    env: { WHO: "daemon", HOME: home, XDG_STATE_HOME: join(home, "state") },
  });
}

/** `agent claude` on `plugins`, pointed at `socket`, its hook JSON on stdin. */
async function agentCall(
  plugins: string,
  socket: string,
  { input = agentPayload("claude", "PreToolUse"), args = [] as string[] } = {},
) {
  const home = await tempDir();
  return await cli(["agent", "claude", "--plugins-dir", plugins, ...args], {
    stdin: input,
    env: {
      WHO: "client",
      TYHOOKS_DAEMON: socket,
      HOME: home,
      XDG_CACHE_HOME: join(home, "cache"),
      XDG_STATE_HOME: join(home, "state"),
    },
  });
}

Deno.test("agent claude is answered by the daemon's persistent guard when the daemon serves its plugins dir", async () => {
  const plugins = await guardPlugins(true);
  await using daemon = await daemonFor(plugins);
  const first = await agentCall(plugins, daemon.socket!);
  const second = await agentCall(plugins, `unix:${daemon.socket!}`);
  assert.equal(first.code, 2, first.stderr);
  assert.match(first.stderr, /^daemon \d+\n$/);
  // One guard process answered both: the persistent one, which only the daemon keeps.
  assert.equal(second.stderr, first.stderr);
  assert.equal(second.code, 2);
});

Deno.test("agent claude decides in-process when TYHOOKS_DAEMON is off", async () => {
  const plugins = await guardPlugins(true);
  await using daemon = await daemonFor(plugins);
  const r = await agentCall(plugins, "off");
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^client \d+\n$/);
  assert.ok(daemon.pid > 0);
});

Deno.test("a daemon serving another plugins dir answers 409, and the call is decided in-process", async () => {
  const served = await guardPlugins();
  const mine = await guardPlugins();
  await using daemon = await daemonFor(served);
  const refused = await daemon.call("POST", "/v1/agent/claude?form=command", {
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
  }, { "X-Tyhooks-Plugins-Dir": encodeURI(await Deno.realPath(mine)) });
  assert.equal(refused.status, 409);
  assert.match(refused.body.error, /serves the plugins dir/);
  const r = await agentCall(mine, daemon.socket!);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^client \d+\n$/);
});

Deno.test("a socket others may use, or in a dir others may enter, is not used", async () => {
  const plugins = await guardPlugins();
  await using daemon = await daemonFor(plugins);
  const socket = daemon.socket!;
  const trusted = await agentCall(plugins, socket);
  assert.match(trusted.stderr, /^daemon /);
  await Deno.chmod(socket, 0o666);
  const open = await agentCall(plugins, socket);
  assert.match(open.stderr, /^client /);
  await Deno.chmod(socket, 0o600);
  await Deno.chmod(dirname(socket), 0o755);
  const openDir = await agentCall(plugins, socket);
  assert.match(openDir.stderr, /^client /);
  await Deno.chmod(dirname(socket), 0o700);
});

/**
 * A listener that takes connections and, per `mode`, never answers, hangs up at once, or hangs up
 * `ms` after taking the request.
 */
function fakeDaemon(path: string, mode: "hang" | "close" | { closeAfterMs: number }) {
  const listener = Deno.listen({ transport: "unix", path });
  const conns: Deno.Conn[] = [];
  const hangUps: Promise<void>[] = [];
  const accepting = (async () => {
    for await (const conn of listener) {
      if (mode === "close") conn.close();
      else if (mode === "hang") conns.push(conn);
      else {
        conns.push(conn);
        hangUps.push(
          conn.read(new Uint8Array(64 * 1024)).then(() => sleep(mode.closeAfterMs))
            .then(() => conns.splice(conns.indexOf(conn), 1)[0].close()),
        );
      }
    }
  })();
  return {
    async [Symbol.asyncDispose]() {
      listener.close();
      await Promise.allSettled(hangUps);
      for (const conn of conns) conn.close();
      await accepting.catch(() => {});
    },
  };
}

Deno.test("a daemon that accepts and never answers: agent claude blocks at its --deadline", async () => {
  const plugins = await guardPlugins();
  const socket = await tempSocket();
  await using _fake = fakeDaemon(socket, "hang");
  await Deno.chmod(socket, 0o600);
  const started = performance.now();
  const r = await agentCall(plugins, socket, { args: ["--deadline", "2s"] });
  const took = performance.now() - started;
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stderr, "tyhooks: No decision within the 2000 ms deadline\n");
  // Generous: a loaded machine starts Deno slowly, but a hang would take the test's whole time.
  assert.ok(took < 20_000, `${took} ms`);
});

Deno.test("agent claude --deadline bounds the daemon's guards too: they are ended, and asked once", async () => {
  const trace = await tempDir();
  const plugins = await makeTree({
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n",
    "g/guard.sh": `#!/bin/sh\necho "$WHO $$" >> ${trace}/asked\nexec sleep 60\n`,
  });
  await using daemon = await daemonFor(plugins);
  const r = await agentCall(plugins, daemon.socket!, { args: ["--deadline", "2s"] });
  // The daemon's block (the guard did not answer within the deadline it was given), or on a
  // loaded machine the client's own at the deadline, whichever comes first.
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /did not answer within the \d+ ms deadline|No decision within the 2000 ms/,
  );
  const asked = await fileLines(join(trace, "asked"));
  assert.equal(asked.length, 1, asked.join("\n"));
  const [who, pid] = asked[0].split(" ");
  assert.equal(who, "daemon");
  // Ended by the daemon at the deadline, not at the guard's 30 s timeout.
  assert.ok(await waitGone(Number(pid), 10_000), `guard ${pid} still runs`);
});

Deno.test("a daemon that hangs up late leaves the in-process path only what is left of --deadline", async () => {
  const plugins = await makeTree({
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n",
    "g/guard.sh": "#!/bin/sh\nexec sleep 60\n",
  });
  const socket = await tempSocket();
  await using _fake = fakeDaemon(socket, { closeAfterMs: 4800 });
  await Deno.chmod(socket, 0o600);
  const started = performance.now();
  const r = await agentCall(plugins, socket, { args: ["--deadline", "5s"] });
  const took = performance.now() - started;
  assert.equal(r.code, 2, r.stderr);
  // A fresh 5 s in-process would end at 9.8 s, after an agent's hook timeout set just above 5 s;
  // the bound leaves a loaded machine 3 s for starting Deno and the rest.
  assert.ok(took < 8000, `${took} ms`);
});

Deno.test("a daemon that hangs up without answering: agent claude decides in-process", async () => {
  const plugins = await guardPlugins();
  const socket = await tempSocket();
  await using _fake = fakeDaemon(socket, "close");
  await Deno.chmod(socket, 0o600);
  const r = await agentCall(plugins, socket, { args: ["--deadline", "20s"] });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^client \d+\n$/);
});

Deno.test("a notified event through the daemon returns 0 at once, and its hook runs in the daemon", async () => {
  const trace = await tempDir();
  const plugins = await makeTree({
    "n/plugin.yaml": "name: n\nhooks:\n  post_tool_call: post.sh\n",
    "n/post.sh": `#!/bin/sh\ncat >/dev/null\necho "$WHO" >> ${trace}/who\n`,
  });
  await using daemon = await daemonFor(plugins);
  const r = await agentCall(plugins, daemon.socket!, {
    input: agentPayload("claude", "PostToolUse"),
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout + r.stderr, "");
  let who = "";
  for (let i = 0; i < 100 && who === ""; i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    who = await Deno.readTextFile(join(trace, "who")).catch(() => "");
  }
  assert.equal(who, "daemon\n");
});

/** Each agent's pre-tool-call event and the body its HTTP hook reads for a block. */
const DENIALS: [string, string, unknown][] = [
  ["claude", "PreToolUse", {
    hookSpecificOutput: {
      hookEventName: "PreToolUse",
      permissionDecision: "deny",
      permissionDecisionReason: "no",
    },
  }],
  ["codex", "PreToolUse", { decision: "block", reason: "no" }],
  ["gemini", "BeforeTool", { decision: "deny", reason: "no" }],
  ["cursor", "preToolUse", { permission: "deny", user_message: "no", agent_message: "no" }],
];

Deno.test("POST /v1/agent/{agent} answers a block in the body each agent's HTTP hook reads, and an allow with {}", async () => {
  const plugins = await makeTree({
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n",
    // Blocks unless the call mentions "harmless".
    "g/guard.sh": '#!/bin/sh\ngrep -q harmless || echo \'{"action":"block","reason":"no"}\'\n',
  });
  await using daemon = await daemonFor(plugins);
  for (const [agent, event, denial] of DENIALS) {
    const answer = await daemon.call("POST", `/v1/agent/${agent}`, agentPayload(agent, event));
    assert.equal(answer.status, 200, agent);
    assert.deepEqual(answer.body, denial, agent);
  }
  const allowed = await daemon.call("POST", "/v1/agent/claude", {
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "echo harmless" },
  });
  assert.deepEqual([allowed.status, allowed.body], [200, {}]);
});

Deno.test("POST /v1/agent/{agent}?form=command answers what agent AGENT prints and exits with", async () => {
  const plugins = await guardPlugins();
  await using daemon = await daemonFor(plugins);
  for (const [agent, event] of DENIALS) {
    const input = agentPayload(agent, event);
    const answer = await daemon.call("POST", `/v1/agent/${agent}?form=command`, input);
    const home = await tempDir();
    const local = await cli(["agent", agent, "--plugins-dir", plugins], {
      stdin: input,
      env: { WHO: "daemon", TYHOOKS_DAEMON: "off", HOME: home },
    });
    const pid = /\d+/g;
    assert.deepEqual(
      { ...answer.body, stderr: answer.body.stderr.replace(pid, "PID") },
      { exit_code: local.code, stdout: local.stdout, stderr: local.stderr.replace(pid, "PID") },
      agent,
    );
  }
  const unknown = await daemon.call("POST", "/v1/agent/copilot", "{}");
  assert.equal(unknown.status, 404);
  const malformed = await daemon.call("POST", "/v1/agent/claude", "{not json");
  assert.equal(malformed.status, 400);
  const badDeadline = await daemon.call("POST", "/v1/agent/claude?deadline=2s", "{}");
  assert.deepEqual(badDeadline.body, { error: 'Invalid deadline "2s": expected milliseconds' });
});

Deno.test("agent claude through the daemon loads only the fast path's few modules", async () => {
  const plugins = await guardPlugins();
  await using daemon = await daemonFor(plugins);
  const home = await tempDir();
  const run = await cli(["agent", "claude"], {
    env: { TYHOOKS_DAEMON: daemon.socket!, TY_PLUGINS_DIR: plugins, HOME: home, WHO: "client" },
    stdin: agentPayload("claude", "PreToolUse"),
    debugLog: true,
  });
  const { stderr } = run;
  // What the guard and tyhooks said, without Deno's debug lines: "client PID" if it ran here.
  const said = stderr.split("\n").filter((line) => !line.startsWith("DEBUG")).join("\n");
  assert.equal(run.code, 2, said);
  assert.match(stderr, /^daemon \d+$/m, said);
  const loaded = [...stderr.matchAll(/for ES module: ([^,\s]+)/g)].map((m) => m[1]);
  const own = [...new Set(loaded.filter((s) => s.startsWith("file:")))];
  assert.ok(own.some((s) => s.endsWith("/lib/agents/daemon_client.ts")), own.join("\n"));
  assert.ok(own.length <= 8, `${own.length} modules:\n${own.join("\n")}`);
  assert.deepEqual(loaded.filter((s) => /deno_node|^node:|npm:/.test(s)), []);
});

Deno.test("tool pre --claude takes the fast path too", async () => {
  const plugins = await guardPlugins();
  await using daemon = await daemonFor(plugins);
  const home = await tempDir();
  const r = await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], {
    stdin: JSON.stringify({ tool_name: "Bash", tool_input: { command: "ls" } }),
    env: { WHO: "client", TYHOOKS_DAEMON: daemon.socket!, HOME: home },
  });
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /^daemon \d+\n$/);
  // Scripts of its own are not the daemon's: decided here.
  const own = await cli(
    [
      "tool",
      "pre",
      "--claude",
      "--plugins-dir",
      plugins,
      "--pre-hook",
      join(plugins, "g/guard.sh"),
    ],
    {
      stdin: JSON.stringify({ tool_name: "Bash", tool_input: { command: "ls" } }),
      env: { WHO: "client", TYHOOKS_DAEMON: daemon.socket!, HOME: home },
    },
  );
  assert.match(own.stderr, /^client \d+\n$/);
});
