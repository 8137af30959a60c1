import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, startupMs, tempDir } from "../_cli.ts";
import { groupGone, readPid } from "../_procs.ts";
import { pluginFiles, pluginsHandling } from "./_trees.ts";
import { serveOn } from "./_serve.ts";
import { hasControl } from "../../lib/text.ts";

const ARGS = JSON.stringify({ command: "rm -rf /tmp/x" });

async function pre(plugins: string, ...extra: string[]) {
  const r = await cli([
    "tool",
    "pre",
    "--tool",
    "bash",
    "--args",
    ARGS,
    "--plugins-dir",
    plugins,
    ...extra,
  ]);
  return { ...r, verdict: r.stdout ? JSON.parse(r.stdout) : undefined };
}

/** A plugins dir whose one guard answers every call with `answer`, as JSON. */
function guardAnswering(answer: unknown): Promise<string> {
  return pluginsHandling("pre_tool_call", {
    guard: `#!/bin/sh\nprintf '%s\\n' '${JSON.stringify(answer)}'\n`,
  });
}

Deno.test("tyhooks tool pre allows with exit 0 when no hook is configured", async () => {
  const r = await pre(await makeTree({}));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.verdict, { action: "allow", reason: "" });
});

Deno.test("tyhooks tool pre prints a guard's reason with its C0, DEL and C1 characters escaped, the same text when parsed", async () => {
  const reason = "no \x1b[31m\x7f\u009b2J";
  const r = await pre(await guardAnswering({ action: "block", reason }));
  assert.equal(r.code, 2, r.stderr);
  assert.ok(!hasControl(r.stdout.trimEnd()), r.stdout);
  assert.match(r.stdout, /\\u001b\[31m\\u007f\\u009b2J/);
  assert.deepEqual(r.verdict, { action: "block", reason });
});

Deno.test("tyhooks tool pre exits 2 on a JSON block answer, with its reason", async () => {
  const plugins = await pluginsHandling("pre_tool_call", {
    guard: `#!/bin/sh\necho '{"action":"block","reason":"no rm"}'\n`,
  });
  const r = await pre(plugins);
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(r.verdict, { action: "block", reason: "no rm" });
});

Deno.test("tyhooks tool pre exits 2 when a hook exits 2, with its stderr as the reason", async () => {
  const hooks = await makeTree({
    "guard.sh": "#!/bin/sh\necho 'outside the sandbox' >&2\nexit 2\n",
  });
  // A relative --pre-hook is resolved against the working directory.
  const r = await cli(
    ["tool", "pre", "--tool", "bash", "--pre-hook", "./guard.sh", "--plugins-dir", hooks],
    { cwd: hooks },
  );
  assert.equal(r.code, 2, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { action: "block", reason: "outside the sandbox" });
});

Deno.test("tyhooks tool pre fails closed when a --pre-hook cannot start", async () => {
  const dir = await makeTree({ "guard.sh": "not a script, and not executable\n" });
  const r = await pre(dir, "--pre-hook", join(dir, "guard.sh"));
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.verdict.reason, /guard.sh" failed: Cannot start/);
});

Deno.test("a --pre-hook or --post-hook that does not exist is a usage error (64), as every file flag", async () => {
  for (const [command, flag] of [["pre", "--pre-hook"], ["post", "--post-hook"]]) {
    const r = await cli(["tool", command, "--tool", "bash", flag, "/nonexistent/hook.sh"]);
    assert.equal(r.code, 64, r.stderr);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, new RegExp(`"/nonexistent/hook.sh" given to "${flag}" does not exist`));
  }
});

const FAILURES: Record<string, string> = {
  "exit 1": "#!/bin/sh\nexit 1\n",
  "a timeout": "#!/bin/sh\nexec sleep 30\n",
  "malformed JSON": "#!/bin/sh\necho '{nope'\n",
  "an unknown action": `#!/bin/sh\necho '{"action":"defer"}'\n`,
};

for (const [what, script] of Object.entries(FAILURES)) {
  Deno.test(
    `tyhooks tool pre blocks on ${what} by default and allows with --on-failure allow`,
    async () => {
      const plugins = await pluginsHandling("pre_tool_call", { guard: script });
      const closed = await pre(plugins, "--timeout", "500ms");
      assert.equal(closed.code, 2, closed.stderr);
      assert.equal(closed.verdict.action, "block");
      assert.match(closed.verdict.reason, /hook of plugin "guard" failed/);
      const open = await pre(plugins, "--timeout", "500ms", "--on-failure", "allow");
      assert.equal(open.code, 0, open.stderr);
      assert.equal(open.verdict.action, "allow");
    },
  );
}

Deno.test("tyhooks tool pre logs what a failing guard wrote on stderr, under either failure policy", async () => {
  const plugins = await pluginsHandling("pre_tool_call", {
    guard: "#!/bin/sh\necho 'why: no config' >&2\nexit 3\n",
  });
  for (const policy of ["block", "allow"]) {
    const r = await pre(plugins, "--on-failure", policy);
    assert.equal(r.verdict.action, policy, r.stderr);
    assert.match(r.stderr, /hook of plugin "guard" failed: exited 3; .*stderr="why: no config"/);
  }
});

Deno.test(
  "tyhooks tool pre asks --pre-hook first, then plugins by name, and runs none after the first block",
  async () => {
    const trace = await tempDir();
    const note = (name: string, rest = "") =>
      `#!/bin/sh\necho ${name} >> ${trace}/order\n${rest}\n`;
    const plugins = await makeTree({
      ...pluginFiles("b-blocks", "pre_tool_call", note("b-blocks", "echo stop >&2; exit 2")),
      ...pluginFiles("a-allows", "pre_tool_call", note("a-allows")),
      ...pluginFiles("c-later", "pre_tool_call", note("c-later")),
      "explicit.sh": note("explicit"),
    });
    // SPEC (one consult loop): all at once by default, the same decision; --sequential keeps ty's
    // one-after-another order and runs none after the first block.
    const together = await pre(plugins, "--pre-hook", join(plugins, "explicit.sh"));
    assert.equal(together.code, 2, together.stderr);
    assert.deepEqual(together.verdict, { action: "block", reason: "stop" });
    await Deno.remove(join(trace, "order"));
    const r = await pre(plugins, "--sequential", "--pre-hook", join(plugins, "explicit.sh"));
    assert.equal(r.code, 2, r.stderr);
    assert.deepEqual(r.verdict, { action: "block", reason: "stop" });
    assert.equal(await Deno.readTextFile(join(trace, "order")), "explicit\na-allows\nb-blocks\n");
  },
);

Deno.test(
  "tyhooks tool pre returns within its default deadline + 1 s with hung hooks, their groups gone",
  async () => {
    const trace = await tempDir();
    const hung = `#!/bin/sh\necho $$ > ${trace}/$TASK_PLUGIN_NAME\nsleep 30 &\nexec sleep 30\n`;
    const plugins = await pluginsHandling("pre_tool_call", { a: hung, b: hung });
    const startup = await startupMs([
      "tool",
      "pre",
      "--tool",
      "bash",
      "--plugins-dir",
      await makeTree({}),
    ]);
    const started = performance.now();
    const r = await pre(plugins, "--timeout", "1s", "--on-failure", "allow");
    const elapsed = performance.now() - started;
    assert.equal(r.code, 0, r.stderr);
    assert.ok(
      elapsed < startup + 2000,
      `returned after ${Math.round(elapsed)} ms, ${Math.round(startup)} of them starting`,
    );
    assert.ok(groupGone(await readPid(join(trace, "a"))));
  },
);

Deno.test(
  "tyhooks tool pre and post reject a missing --tool, bad --args JSON and a bad --on-failure with exit 64",
  async () => {
    const noTool = await cli(["tool", "pre"]);
    assert.equal(noTool.code, 64);
    assert.match(noTool.stderr, /Missing flag "--tool"/);
    const badArgs = await cli(["tool", "post", "--tool", "bash", "--args", "{oops"]);
    assert.equal(badArgs.code, 64);
    assert.match(badArgs.stderr, /Invalid JSON for flag "--args"/);
    const badPolicy = await cli(["tool", "pre", "--tool", "bash", "--on-failure", "maybe"]);
    assert.equal(badPolicy.code, 64);
    assert.match(badPolicy.stderr, /"--on-failure"/);
  },
);

Deno.test(
  "tyhooks tool post sends hook, tool, args, result, platform and user_id, and no error key without an error",
  async () => {
    const trace = await tempDir();
    const plugins = await pluginsHandling("post_tool_call", {
      audit: `#!/bin/sh\ncat > ${trace}/request\n`,
    });
    const r = await cli([
      "tool",
      "post",
      "--tool",
      "bash",
      "--args",
      ARGS,
      "--result",
      "removed",
      "--platform",
      "slack",
      "--user",
      "u7",
      "--plugins-dir",
      plugins,
    ]);
    assert.deepEqual([r.code, r.stdout], [0, ""], r.stderr);
    assert.deepEqual(JSON.parse(await Deno.readTextFile(join(trace, "request"))), {
      hook: "post_tool_call",
      tool: "bash",
      args: { command: "rm -rf /tmp/x" },
      result: "removed",
      platform: "slack",
      user_id: "u7",
    });
    await cli([
      "tool",
      "post",
      "--tool",
      "bash",
      "--error",
      "denied",
      "--plugins-dir",
      plugins,
    ]);
    assert.equal(JSON.parse(await Deno.readTextFile(join(trace, "request"))).error, "denied");
  },
);

Deno.test("tyhooks tool post --detach returns at once and the post hook still runs", async () => {
  const trace = await tempDir();
  const hooks = await makeTree({ "post.sh": `#!/bin/sh\nsleep 0.5\ncat > ${trace}/request\n` });
  const r = await cli(
    [
      "tool",
      "post",
      "--tool",
      "edit",
      "--post-hook",
      "post.sh",
      "--detach",
      "--plugins-dir",
      hooks,
    ],
    { cwd: hooks, env: { XDG_CACHE_HOME: trace } },
  );
  assert.deepEqual([r.code, r.stdout], [0, ""], r.stderr);
  const request = join(trace, "request");
  const until = Date.now() + 10_000;
  while (Date.now() < until && !(await Deno.stat(request).catch(() => null))?.size) {
    await new Promise((f) => setTimeout(f, 50));
  }
  assert.equal(JSON.parse(await Deno.readTextFile(request)).tool, "edit");
});

Deno.test("tyhooks tool pre blocks a guard's ask saying it needs approval; with --json it reports the ask, its args and context", async () => {
  const ask = {
    action: "ask",
    reason: "rm needs a person",
    args: { command: "rm -i x" },
    context: "asked",
  };
  const plugins = await guardAnswering(ask);
  const plain = await pre(plugins);
  assert.equal(plain.code, 2, plain.stderr);
  assert.deepEqual(plain.verdict, {
    action: "block",
    reason: "needs approval: rm needs a person",
    context: "asked",
  });
  const json = await pre(plugins, "--json");
  assert.equal(json.code, 2, json.stderr);
  assert.deepEqual(json.verdict, ask);
});

Deno.test("tyhooks tool pre prints the args a guard rewrote and the context it gave, allowing with exit 0", async () => {
  const allow = { action: "allow", args: { command: "rm -i x" }, context: "made it -i" };
  const r = await pre(await guardAnswering(allow));
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(r.verdict, { ...allow, reason: "" });
});

Deno.test("tyhooks tool pre --claude: a migrated Claude Code hook's allow allows silently, its ask and its rewrite reach Claude Code as its own fields", async () => {
  const claude = (answer: unknown) => guardAnswering({ hookSpecificOutput: answer });
  const stdin = JSON.stringify({ tool_name: "Bash", tool_input: { command: "ls" } });
  const run = async (plugins: string) =>
    await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], { stdin });
  const allowed = await run(
    await claude({ hookEventName: "PreToolUse", permissionDecision: "allow" }),
  );
  assert.equal(allowed.code, 0, allowed.stderr);
  assert.equal(allowed.stdout + allowed.stderr, "");
  const asked = await run(
    await claude({ permissionDecision: "ask", permissionDecisionReason: "sure?" }),
  );
  assert.equal(asked.code, 0, asked.stderr);
  assert.deepEqual(JSON.parse(asked.stdout).hookSpecificOutput, {
    hookEventName: "PreToolUse",
    permissionDecision: "ask",
    permissionDecisionReason: "sure?",
  });
  const rewritten = await run(await claude({ updatedInput: { command: "ls -a" } }));
  assert.equal(rewritten.code, 0, rewritten.stderr);
  assert.deepEqual(JSON.parse(rewritten.stdout).hookSpecificOutput, {
    hookEventName: "PreToolUse",
    updatedInput: { command: "ls -a" },
  });
});

Deno.test("the daemon's /v1/tool/pre reports an ask, and persistent guards read the call's cwd and agent", async () => {
  const trace = await tempDir();
  // A read loop echoing each request's id, as a persistent guard must.
  const guard = `#!/bin/sh
while IFS= read -r line; do
  printf '%s\\n' "$line" >> ${trace}/requests
  id=$(printf '%s' "$line" | sed 's/^{"id":"\\([0-9]*\\)".*/\\1/')
  printf '{"id":"%s","action":"ask","reason":"who?","context":"c"}\\n' "$id"
done
`;
  const plugins = await makeTree({
    "g/plugin.yaml":
      "name: g\nhooks:\n  pre_tool_call: g.sh\ntyhooks:\n  pre_tool_call: {persistent: true}\n",
    "g/g.sh": guard,
  });
  const daemon = await serveOn(plugins, ["--hooks-dir", join(trace, "none")]);
  try {
    const agent = { name: "codex", event: "PreToolUse", session_id: "s", input: { a: 1 } };
    const answer = await daemon.call("POST", "/v1/tool/pre", {
      tool: "Bash",
      args: { command: "ls" },
      cwd: "/repo",
      agent,
    });
    assert.deepEqual(answer.body, { action: "ask", reason: "who?", context: "c" });
    const sent = JSON.parse((await Deno.readTextFile(join(trace, "requests"))).trim());
    assert.deepEqual(sent, {
      id: sent.id,
      hook: "pre_tool_call",
      tool: "Bash",
      args: { command: "ls" },
      platform: "",
      user_id: "",
      cwd: "/repo",
      agent,
    });
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});

const CUT_ANSWERS: Record<string, string> = {
  // A rewrite of a 1.1 MB file: valid JSON, but past the 1 MiB kept of a hook's output.
  "a rewrite of a large file": `#!/bin/sh\nprintf '{"action":"allow","args":{"content":"'\n` +
    `printf '%1100000s' | tr ' ' x\nprintf '"}}'\n`,
  // What is kept is all blank, which alone would read as silence: allow.
  "a block after 1.1 MB of blanks": `#!/bin/sh\nprintf '%1100000s'\necho '{"action":"block"}'\n`,
};

for (const [what, guard] of Object.entries(CUT_ANSWERS)) {
  Deno.test(`tyhooks tool pre blocks on a guard's answer over the output cap (${what}), saying it was cut`, async () => {
    const plugins = await pluginsHandling("pre_tool_call", { guard });
    const r = await pre(plugins);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.verdict.action, "block");
    assert.match(
      r.verdict.reason,
      /hook of plugin "guard" failed: its answer of 11000\d\d bytes is over the output cap/,
    );
  });
}
