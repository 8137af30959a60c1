/**
 * `tyhooks agent AGENT` through the real CLI: the answers each agent reads, the failures that
 * block (never fail open), and notified events that return before their hooks have run.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, spawnCli, withTree } from "../_cli.ts";
import { hasControl } from "../../lib/text.ts";
import { MAX_CALL_CONTAINERS } from "../../lib/cli/runner.ts";
import { agentPayload, isJson, readPid, waitForFile, waitGone } from "../_procs.ts";

/** The pre-tool-call event of each agent, as recorded. */
const PRE_EVENTS: [string, string][] = [
  ["claude", "PreToolUse"],
  ["codex", "PreToolUse"],
  ["gemini", "BeforeTool"],
  ["cursor", "preToolUse"],
  ["cursor", "beforeShellExecution"],
];

// A guard that blocks every call whose request mentions "touch" or "npm", with one reason.
const GUARD = `#!/bin/sh
if grep -q -e touch -e npm; then
  echo '{"action":"block","reason":"not that, please"}'
fi
`;

function plugin(name: string, hooks: Record<string, string>): Record<string, string> {
  const files: Record<string, string> = {};
  const lines = Object.entries(hooks).map(([event, script]) => {
    files[`plugins/${name}/${event}.sh`] = script;
    return `  ${event}: ${event}.sh`;
  });
  files[`plugins/${name}/plugin.yaml`] = `name: ${name}\nhooks:\n${lines.join("\n")}\n`;
  return files;
}

function env(dir: string): Record<string, string> {
  return { TYHOOKS_NO_CACHE: "1", XDG_CACHE_HOME: join(dir, "cache") };
}

Deno.test("agent blocks a tool call of every agent with exit 2 and the guard's reason alone on stderr", async () => {
  await withTree(plugin("guard", { pre_tool_call: GUARD }), async (dir) => {
    for (const [agent, event] of PRE_EVENTS) {
      const r = await cli(["agent", agent, "--plugins-dir", join(dir, "plugins")], {
        stdin: agentPayload(agent, event),
        env: env(dir),
      });
      assert.deepEqual(r, { code: 2, stdout: "", stderr: "not that, please\n" }, agent);
    }
  });
});

Deno.test("agent allows with exit 0 and nothing on stdout or stderr", async () => {
  await withTree(plugin("guard", { pre_tool_call: "#!/bin/sh\nexit 0\n" }), async (dir) => {
    for (const [agent, event] of PRE_EVENTS) {
      const r = await cli(["agent", agent, "--plugins-dir", join(dir, "plugins")], {
        stdin: agentPayload(agent, event),
        env: env(dir),
      });
      assert.deepEqual(r, { code: 0, stdout: "", stderr: "" }, `${agent} ${event}`);
    }
  });
});

/** A Claude Code PreToolUse judged by one guard that fails: blocked, the reason one line. */
async function blockedByFailingGuard(guard: string): Promise<string> {
  let stderr = "";
  await withTree(plugin("guard", { pre_tool_call: guard }), async (dir) => {
    const r = await cli(["agent", "claude", "--plugins-dir", join(dir, "plugins")], {
      stdin: agentPayload("claude", "PreToolUse"),
      env: env(dir),
    });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    stderr = r.stderr;
  });
  return stderr;
}

Deno.test("agent blocks when a guard fails, the reason once on stderr and no hint the model could follow", async () => {
  const stderr = await blockedByFailingGuard("#!/bin/sh\necho 'Traceback: boom' >&2\nexit 1\n");
  assert.match(stderr, /Pre-tool-call hook of plugin "guard" failed/);
  assert.doesNotMatch(stderr, /hint|--on-failure/);
});

Deno.test("agent blocks when a guard cannot be loaded, the reason once and no hint", async () => {
  await withTree({
    "plugins/guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: [unclosed\n",
  }, async (dir) => {
    const r = await cli(["agent", "gemini", "--plugins-dir", join(dir, "plugins")], {
      stdin: agentPayload("gemini", "BeforeTool"),
      env: env(dir),
    });
    assert.equal(r.code, 2);
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /Cannot trust the pre-tool-call hooks/);
    assert.doesNotMatch(r.stderr, /hint|--on-failure/);
  });
});

Deno.test("agent blocks input it cannot read, an unknown agent and a bad line, and allows them with --on-failure allow", async () => {
  const cases: [string[], string, RegExp][] = [
    [["agent", "claude"], "not json", /^tyhooks: Malformed JSON on stdin/],
    [["agent", "claude"], "[1]", /^tyhooks: Invalid hook input on stdin: expected a JSON object/],
    [["agent", "claude"], '{"tool_name":"Bash"}', /^tyhooks: .*no "hook_event_name"/],
    [["agent", "gemini"], '{"hook_event_name":"BeforeTool"}', /"tool_name" must be/],
    [["agent", "claud"], agentPayload("claude", "PreToolUse"), /^tyhooks: Unknown agent "claud"/],
    [
      ["agent", "claude", "--bogus"],
      agentPayload("claude", "PreToolUse"),
      /Unknown flag "--bogus"/,
    ],
    [["agent", "claude", "--deadline", "soon"], "{}", /Invalid duration "soon"/],
    // An unset variable in the hook's command: the flag takes "agent" for its value.
    [["--hooks-dir", "agent", "claude"], "{}", /^tyhooks: Unknown command "claude"\n$/],
    // A hook wired with the wrong agent's name: Claude Code's tool call to Gemini CLI's command.
    [
      ["agent", "gemini"],
      agentPayload("claude", "PreToolUse"),
      /^tyhooks: "PreToolUse" is an event of Claude Code and Codex, not of Gemini CLI: is this hook meant to run "tyhooks agent claude"\?\n$/,
    ],
    [["agent"], "{}", /Missing argument for "agent"/],
  ];
  // Refused before its parse, which would take seconds, mostly in V8's garbage collector.
  cases.push([
    ["agent", "claude", "--deadline", "2s"],
    agentPayload("claude", "PreToolUse").replace(
      '"tool_use_id"',
      `"many": [${"{},".repeat(MAX_CALL_CONTAINERS)}{}], "tool_use_id"`,
    ),
    /^tyhooks: Cannot read the Claude Code hook input on stdin: more than 500000 JSON objects and arrays/,
  ]);
  for (const [args, stdin, reason] of cases) {
    const r = await cli([...args, "--plugins-dir", "/nonexistent"], { stdin });
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "");
    assert.match(r.stderr, reason);
    // One line: the reason, without a hint.
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
  }
  // A plugin named "agent" is not an agent's hook line: its failure keeps its own code.
  const plugin = await cli(["plugins", "run", "agent", "claude", "--plugins-dir", "/nonexistent"]);
  assert.equal(plugin.code, 64, plugin.stderr);
  const open = await cli(["agent", "claude", "--on-failure", "allow"], { stdin: "not json" });
  assert.deepEqual(open, { code: 0, stdout: "", stderr: "" });
});

Deno.test("agent never writes its failure as JSON, even with --log-format json", async () => {
  // Gemini CLI reads JSON on stderr as the hook's answer, which a log line would turn into allow.
  const r = await cli(["agent", "gemini", "--log-format", "json"], { stdin: "not json" });
  assert.equal(r.code, 2);
  assert.throws(() => JSON.parse(r.stderr));
});

// The call exits before the guard's grace ends: a guard that ignores SIGTERM must not outlive it.
// (A whole-call deadline too short for the guard's own bound ends the call the same way.)
Deno.test("agent blocks when SIGTERM comes while a guard decides, and the guard dies with it", async () => {
  await withTree(
    plugin("guard", {
      pre_tool_call: '#!/bin/sh\ntrap "" TERM\necho $$ > "$TASK_PLUGIN_DIR/pid"\nexec sleep 30\n',
    }),
    async (dir) => {
      const child = spawnCli(["agent", "codex", "--plugins-dir", join(dir, "plugins")], {
        env: env(dir),
        stdin: "piped",
      });
      const writer = child.stdin.getWriter();
      await writer.write(new TextEncoder().encode(agentPayload("codex", "PreToolUse")));
      await writer.close();
      const pid = await readPid(join(dir, "plugins", "guard", "pid"), 30_000);
      child.kill("SIGTERM");
      const out = await child.output();
      assert.equal(out.code, 2);
      assert.equal(new TextDecoder().decode(out.stdout), "");
      assert.equal(new TextDecoder().decode(out.stderr), "tyhooks: Interrupted by SIGTERM\n");
      assert.ok(await waitGone(pid, 3000), "the guard is dead once the call has returned");
    },
  );
});

Deno.test("agent blocks at --deadline when a guard has not answered", async () => {
  await withTree(plugin("guard", { pre_tool_call: "#!/bin/sh\nexec sleep 30\n" }), async (dir) => {
    const r = await cli(
      ["agent", "claude", "--deadline", "1s", "--plugins-dir", join(dir, "plugins")],
      { stdin: agentPayload("claude", "PreToolUse"), env: env(dir) },
    );
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.equal(r.stderr.trimEnd().split("\n").length, 1, r.stderr);
    assert.match(r.stderr, /guard|deadline/);
  });
});

Deno.test("a guard's malformed answer is quoted in one line, its control characters escaped", async () => {
  const junk = "#!/bin/sh\ncat >/dev/null\nprintf '\\033[2J\\033]0;pwn\\007 junk\\nmore {'\n";
  const stderr = await blockedByFailingGuard(junk);
  assert.match(stderr, /malformed JSON: .*\\x1b\[2J/);
  assert.ok(!hasControl(stderr.trimEnd()), stderr);
});

Deno.test("agent returns from a notified event before its hook has run, which runs in the background", async () => {
  // The hook waits for a file the test writes only once the command has returned.
  const waiter = `#!/bin/sh
cat > "$TASK_PLUGIN_DIR/request.json.tmp"
while [ ! -e "$TASK_PLUGIN_DIR/go" ]; do sleep 0.05; done
mv "$TASK_PLUGIN_DIR/request.json.tmp" "$TASK_PLUGIN_DIR/request.json"
`;
  await withTree(plugin("audit", { post_tool_call: waiter }), async (dir) => {
    const audit = join(dir, "plugins", "audit");
    const r = await cli(["agent", "claude", "--plugins-dir", join(dir, "plugins")], {
      stdin: agentPayload("claude", "PostToolUseFailure"),
      env: env(dir),
    });
    assert.deepEqual(r, { code: 0, stdout: "", stderr: "" });
    await Deno.writeTextFile(join(audit, "go"), "");
    const request = JSON.parse(
      await waitForFile(join(audit, "request.json"), { ms: 30_000, ready: isJson }),
    );
    assert.equal(request.hook, "post_tool_call");
    assert.equal(request.tool, "Bash");
    assert.equal(request.error, "Exit code 1\nto-stdout\nto-stderr");
    assert.equal(request.platform, "claude-code");
  });
});

Deno.test("agent answers a notified event with exit 0 and silence, whatever its hook does", async () => {
  const failing = '#!/bin/sh\ncat > "$TASK_PLUGIN_DIR/event.json"\nexit 3\n';
  await withTree(plugin("notes", { "agent.session_start": failing }), async (dir) => {
    const r = await cli(["agent", "gemini", "--plugins-dir", join(dir, "plugins")], {
      stdin: agentPayload("gemini", "SessionStart"),
      env: env(dir),
    });
    assert.deepEqual(r, { code: 0, stdout: "", stderr: "" });
    const seen = JSON.parse(
      await waitForFile(join(dir, "plugins", "notes", "event.json"), { ms: 30_000, ready: isJson }),
    );
    assert.equal(seen.event, "agent.session_start");
    // An event no table maps is told as agent.<snake_case>, and answered the same way; so is
    // one that cannot be told (a tool's end naming no tool).
    for (
      const stdin of ['{"hook_event_name":"PostToolBatch"}', '{"hook_event_name":"PostToolUse"}']
    ) {
      const other = await cli(["agent", "claude", "--plugins-dir", join(dir, "plugins")], {
        stdin,
        env: env(dir),
      });
      assert.deepEqual(other, { code: 0, stdout: "", stderr: "" }, stdin);
    }
    // Why the second was not told is where background runs log, not on the model's stderr.
    const logged = await Deno.readTextFile(join(dir, "cache", "tyhooks", "detached.log"));
    const lines = logged.trim().split("\n").map((line) => JSON.parse(line));
    assert.ok(
      lines.some((line) =>
        line.level === "error" &&
        line.msg === 'Agent event "PostToolUse" not handed on: ' +
            'Invalid hook input: "tool_name" must be a non-empty string'
      ),
      logged,
    );
  });
});

Deno.test("agent allows a prompt and a stop that no hook judges", async () => {
  await withTree(plugin("guard", { pre_tool_call: GUARD }), async (dir) => {
    for (const event of ["UserPromptSubmit", "Stop"]) {
      const r = await cli(["agent", "claude", "--plugins-dir", join(dir, "plugins")], {
        stdin: agentPayload("claude", event),
        env: env(dir),
      });
      assert.deepEqual(r, { code: 0, stdout: "", stderr: "" }, event);
    }
  });
});
