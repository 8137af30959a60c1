/**
 * `tool pre --claude` and `tool post --claude`, `agent claude` as Claude Code PreToolUse and
 * PostToolUse hook commands, and `--request -`, through the real CLI.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, spawnCli, withTree } from "../_cli.ts";
import { isJson, waitForFile } from "../_procs.ts";

const ENV = { TYHOOKS_NO_CACHE: "1" };

/** What Claude Code writes on a PreToolUse hook's stdin. */
const PRE_INPUT = JSON.stringify({
  session_id: "abc123",
  transcript_path: "/tmp/t.jsonl",
  cwd: "/work",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "rm -rf /", description: "clean up" },
});

// A guard that records its request and blocks rm, allowing the rest.
const GUARD = `#!/bin/sh
cat > "$TASK_PLUGIN_DIR/../request.json"
if grep -q '"rm ' "$TASK_PLUGIN_DIR/../request.json"; then
  echo '{"action":"block","reason":"no rm, please"}'
fi
`;

function guardFiles(script: string): Record<string, string> {
  return {
    "plugins/guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
    "plugins/guard/guard.sh": script,
  };
}

/** A post_tool_call hook, in plugin `name`, that saves its request as plugins/`file`. */
function recorderFiles(name: string, file: string): Record<string, string> {
  return {
    [`plugins/${name}/plugin.yaml`]: `name: ${name}\nhooks:\n  post_tool_call: save.sh\n`,
    [`plugins/${name}/save.sh`]: `#!/bin/sh\ncat > "$TASK_PLUGIN_DIR/../${file}"\n`,
  };
}

Deno.test("tool pre --claude blocks with exit 2, the reason on stderr and nothing on stdout", async () => {
  await withTree(guardFiles(GUARD), async (dir) => {
    const r = await cli(["tool", "pre", "--claude", "--plugins-dir", join(dir, "plugins")], {
      stdin: PRE_INPUT,
      env: ENV,
    });
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    // Claude Code gives the model the whole of stderr as the reason: nothing else is on it.
    assert.equal(r.stderr, "no rm, please\n");
    // The hook got tyhooks' request, mapped from Claude Code's fields, after its own id, then
    // where the agent stands and the agent's own hook JSON.
    const request = JSON.parse(await Deno.readTextFile(join(dir, "plugins", "request.json")));
    assert.deepEqual(request, {
      id: "1",
      hook: "pre_tool_call",
      tool: "Bash",
      args: { command: "rm -rf /", description: "clean up" },
      platform: "claude-code",
      user_id: "abc123",
      cwd: "/work",
      agent: {
        name: "claude",
        event: "PreToolUse",
        session_id: "abc123",
        input: JSON.parse(PRE_INPUT),
      },
    });
  });
});

Deno.test("tool pre --claude allows with exit 0 and prints nothing", async () => {
  await withTree(guardFiles(GUARD), async (dir) => {
    const input = JSON.stringify({ ...JSON.parse(PRE_INPUT), tool_input: { command: "ls" } });
    const r = await cli(["tool", "pre", "--claude", "--plugins-dir", join(dir, "plugins")], {
      stdin: input,
      env: ENV,
    });
    assert.deepEqual(r, { code: 0, stdout: "", stderr: "" });
  });
});

Deno.test("tool pre --claude exits 2 on garbage stdin, and 0 with --on-failure allow", async () => {
  await withTree(guardFiles(GUARD), async (dir) => {
    const plugins = join(dir, "plugins");
    for (const stdin of ["not json", "", "[1]", '{"tool_input":{}}']) {
      const r = await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], {
        stdin,
        env: ENV,
      });
      assert.equal(r.code, 2, JSON.stringify(stdin));
      assert.equal(r.stdout, "");
      assert.match(r.stderr, /^tyhooks: /);
    }
    const open = await cli(
      ["tool", "pre", "--claude", "--on-failure", "allow", "--plugins-dir", plugins],
      { stdin: "not json", env: ENV },
    );
    // Allowed means exit 0: Gemini CLI would read another exit with text on stderr as a block.
    assert.deepEqual(open, { code: 0, stdout: "", stderr: "" });
  });
});

Deno.test("tool pre --claude exits 2 on a usage error, even one found before the command runs", async () => {
  const lines = [
    ["tool", "pre", "--claude", "--bogus"],
    ["tool", "pree", "--claude"],
    ["tool", "pre", "--claude", "--tool", "Bash"],
    ["tool", "pre", "--claude", "--on-failure", "maybe"],
    ["tool", "pre", "--claude", "--timeout", "soon"],
    // A natural thing to write in settings.json; the flag takes no value, but it meant the bridge.
    ["tool", "pre", "--claude=true"],
  ];
  for (const args of lines) {
    const r = await cli(args, { stdin: PRE_INPUT, env: ENV });
    assert.equal(r.code, 2, args.join(" "));
    assert.equal(r.stdout, "");
  }
  // Control: the same mistakes without --claude are usage errors.
  const plain = await cli(["tool", "pre", "--bogus"]);
  assert.equal(plain.code, 64);
});

Deno.test("tool pre --claude fails closed unless the policy the line really sets is allow", async () => {
  const lines = [
    // The last --on-failure is the one that counts, as for the hooks' own failures.
    ["--on-failure", "allow", "--on-failure", "block"],
    ["--on-failure=allow", "--on-failure=block"],
    // A string flag takes the next word as its value: no policy is set here.
    ["--pre-hook", "--on-failure", "allow"],
  ];
  for (const flags of lines) {
    const r = await cli(["tool", "pre", "--claude", ...flags], { stdin: "not json", env: ENV });
    assert.equal(r.code, 2, `${flags.join(" ")}: ${r.stderr}`);
  }
});

/** `tyhooks <args>` with `bytes` on stdin, then end of input unless `keepOpen`. */
async function withStdinBytes(args: string[], bytes: Uint8Array, keepOpen = false) {
  const child = spawnCli(args, { env: ENV, stdin: "piped", stdout: "piped", stderr: "piped" });
  const writer = child.stdin.getWriter();
  await writer.write(bytes);
  if (!keepOpen) await writer.close();
  try {
    const out = await child.output();
    return { code: out.code, stderr: new TextDecoder().decode(out.stderr) };
  } finally {
    if (keepOpen) await writer.close().catch(() => {});
  }
}

Deno.test("tool pre --claude blocks when stdin never ends: the deadline bounds the read too", async () => {
  // Claude Code would time the hook out at last, and let the call through.
  const args = ["tool", "pre", "--claude", "--deadline", "1s"];
  const r = await withStdinBytes(args, new TextEncoder().encode(PRE_INPUT.slice(0, 20)), true);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /stdin: it did not end within 1000 ms/);
});

Deno.test("tool pre --claude guards with $HOME unset when --plugins-dir names the plugins", async () => {
  await withTree(guardFiles(GUARD), async (dir) => {
    // Without $HOME (and XDG_CONFIG_HOME) only the legacy hooks dir cannot be found.
    const r = await cli(["tool", "pre", "--claude", "--plugins-dir", join(dir, "plugins")], {
      stdin: PRE_INPUT,
      env: ENV,
      wrap: ["env", "-u", "HOME", "-u", "XDG_CONFIG_HOME"],
    });
    assert.deepEqual([r.code, r.stdout, r.stderr], [2, "", "no rm, please\n"]);
  });
});

Deno.test("tool pre --claude refuses stdin that is not valid UTF-8, rather than patch it for the guard", async () => {
  const [head, tail] = PRE_INPUT.split("rm -rf");
  const encoder = new TextEncoder();
  // "rm\xff -rf": decoded leniently, the guard would see "rm\ufffd -rf".
  const bytes = [...encoder.encode(`${head}rm`), 0xff, ...encoder.encode(` -rf${tail}`)];
  const args = ["tool", "pre", "--claude", "--plugins-dir", "/nonexistent"];
  const r = await withStdinBytes(args, new Uint8Array(bytes));
  assert.equal(r.code, 2);
  assert.match(r.stderr, /stdin: not valid UTF-8/);
});

Deno.test("tool pre --claude blocks with exit 2 even when stderr cannot be written", async () => {
  await withTree(guardFiles(GUARD), async (dir) => {
    const plugins = join(dir, "plugins");
    // /dev/full: every write fails (ENOSPC), so neither the reason nor an error can be printed.
    const wrap = ["sh", "-c", 'exec "$@" 2>/dev/full', "sh"];
    const blocked = await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], {
      stdin: PRE_INPUT,
      env: ENV,
      wrap,
    });
    assert.equal(blocked.code, 2);
    const garbage = await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], {
      stdin: "not json",
      env: ENV,
      wrap,
    });
    assert.equal(garbage.code, 2);
  });
});

Deno.test("tool pre --claude blocks when a hook times out, and allows with --on-failure allow", async () => {
  await withTree(guardFiles("#!/bin/sh\nexec sleep 30\n"), async (dir) => {
    const args = [
      "tool",
      "pre",
      "--claude",
      "--timeout",
      "300ms",
      "--plugins-dir",
      join(dir, "plugins"),
    ];
    const closed = await cli(args, { stdin: PRE_INPUT, env: ENV });
    assert.equal(closed.code, 2);
    assert.equal(closed.stdout, "");
    assert.match(closed.stderr, /guard.*(timed out|timeout)/);
    const open = await cli([...args, "--on-failure", "allow"], { stdin: PRE_INPUT, env: ENV });
    assert.equal(open.code, 0, open.stderr);
    assert.equal(open.stdout, "");
  });
});

Deno.test("tool post --claude tells the post hooks in the background, with tool_response as the result, exit 0", async () => {
  await withTree(recorderFiles("log", "request.json"), async (dir) => {
    const input = JSON.stringify({
      ...JSON.parse(PRE_INPUT),
      hook_event_name: "PostToolUse",
      tool_input: { command: "ls" },
      tool_response: { stdout: "a b", stderr: "", interrupted: false },
    });
    const r = await cli(["tool", "post", "--claude", "--plugins-dir", join(dir, "plugins")], {
      stdin: input,
      env: { ...ENV, XDG_CACHE_HOME: join(dir, "cache") },
    });
    assert.deepEqual(r, { code: 0, stdout: "", stderr: "" });
    const request = JSON.parse(
      await waitForFile(join(dir, "plugins", "request.json"), { ms: 30_000, ready: isJson }),
    );
    assert.equal(request.tool, "Bash");
    assert.deepEqual(JSON.parse(request.result), { stdout: "a b", stderr: "", interrupted: false });
    assert.equal(request.user_id, "abc123");
    const bad = await cli(["tool", "post", "--claude"], { stdin: "{", env: ENV });
    assert.equal(bad.code, 2);
  });
});

Deno.test("tool pre and tool post --request - read tyhooks' own request JSON on stdin", async () => {
  await withTree({ ...guardFiles(GUARD), ...recorderFiles("log", "post.json") }, async (dir) => {
    const plugins = join(dir, "plugins");
    const call = { tool: "bash", args: { command: "rm -rf /" }, platform: "cli", user_id: "me" };
    const pre = await cli(["tool", "pre", "--request", "-", "--plugins-dir", plugins], {
      stdin: JSON.stringify(call),
      env: ENV,
    });
    assert.equal(pre.code, 2, pre.stderr);
    assert.deepEqual(JSON.parse(pre.stdout), { action: "block", reason: "no rm, please" });
    const post = await cli(["tool", "post", "--request", "-", "--plugins-dir", plugins], {
      stdin: JSON.stringify({ ...call, result: "", error: "-bash: rm: denied" }),
      env: ENV,
    });
    assert.equal(post.code, 0, post.stderr);
    const seen = JSON.parse(await Deno.readTextFile(join(plugins, "post.json")));
    assert.equal(seen.error, "-bash: rm: denied");
    const wrong = await cli(["tool", "pre", "--request", "-"], { stdin: '{"tool":7}', env: ENV });
    assert.equal(wrong.code, 64);
    assert.match(wrong.stderr, /Invalid request for "tool pre": "tool"/);
  });
});

Deno.test("a Write or a tool result over 1 MiB reaches the hooks through the bridge, not a block", async () => {
  await withTree({ ...guardFiles(GUARD), ...recorderFiles("audit", "post.json") }, async (dir) => {
    const plugins = join(dir, "plugins");
    const content = "x".repeat(3_000_000);
    const pre = await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], {
      stdin: JSON.stringify({ tool_name: "Write", tool_input: { file_path: "/w", content } }),
      env: ENV,
    });
    assert.equal(pre.code, 0, pre.stderr);
    const seen = JSON.parse(await Deno.readTextFile(join(plugins, "request.json")));
    assert.equal(seen.args.content.length, content.length);
    const post = await cli(["tool", "post", "--claude", "--plugins-dir", plugins], {
      stdin: JSON.stringify({
        tool_name: "Read",
        tool_input: { file_path: "/big" },
        tool_response: content,
      }),
      env: { ...ENV, XDG_CACHE_HOME: join(dir, "cache") },
    });
    assert.equal(post.code, 0, post.stderr);
    const audited = JSON.parse(
      await waitForFile(join(plugins, "post.json"), { ms: 30_000, ready: isJson }),
    );
    assert.equal(audited.tool, "Read");
    assert.ok(audited.result.length >= content.length);
  });
});
