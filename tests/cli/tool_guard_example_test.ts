import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, ROOT, tempDir } from "../_cli.ts";
import { serveOn } from "./_serve.ts";

const EXAMPLES = join(ROOT, "plugins-example");
const GUARD = join(EXAMPLES, "tool-guard/guard.sh");

const BLOCKED: [string, string][] = [
  ["rm -rf /", "recursive rm of /"],
  ["rm -rf ~", "recursive rm of ~"],
  ["rm -fr ~/", "recursive rm of ~/"],
  ["cd /srv && sudo rm -rf /*", "recursive rm of /*"],
  // A wrapper's options, and the value of one such as -u, are not the command.
  ["sudo -u root rm -rf /usr", "recursive rm of /usr"],
  ["nice -n 5 env -i rm -rf /etc", "recursive rm of /etc"],
  ["rm -r -f /etc", "recursive rm of /etc"],
  ['rm -rf "$HOME"', "recursive rm of $HOME"],
  ["rm -rf /home/bob", "recursive rm of /home/bob"],
  ["rm --no-preserve-root -rf /", "rm --no-preserve-root"],
  ["mkfs.ext4 /dev/sda1", "mkfs.ext4 formats a disk"],
  ["dd if=/dev/zero of=/dev/sda bs=1M", "dd of=/dev/sda overwrites a disk"],
];

const ASKED: [string, string][] = [
  ["git push --force", "git push --force overwrites the remote's history"],
  ["git push -f origin main", "git push -f overwrites the remote's history"],
  ["git push origin +main", "git push +main overwrites the remote's history"],
  ["git clean -fd && make", "git clean -f deletes untracked files for good"],
];
const FORCE_PUSH_CONTEXT =
  "tool-guard: prefer git push --force-with-lease, which refuses to overwrite commits you have not seen";
const DRY_RUN_CONTEXT =
  "tool-guard: git clean ran as a dry run (--dry-run) and only listed what it would delete; ask the user before deleting untracked files";

const ALLOWED: string[] = [
  "rm -rf /tmp/build",
  "rm -rf ./build node_modules",
  "rm /tmp/x",
  "ls -la /",
  "sudo -u bob ls /",
  "git push --force-with-lease origin main",
  "git push origin main",
  'echo "rm -rf /"',
  "grep -r 'git push --force' docs/",
  "dd if=/dev/zero of=./disk.img bs=1M count=1",
  "git clean -n -fd",
];

function request(tool: string, args: unknown, id = "1"): string {
  return JSON.stringify({ id, hook: "pre_tool_call", tool, args, platform: "test", user_id: "u" });
}

async function oneShot(line: string): Promise<string> {
  const child = new Deno.Command(GUARD, { stdin: "piped", stdout: "piped", stderr: "piped" })
    .spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(line + "\n"));
  await writer.close();
  const out = await child.output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

Deno.test("tool-guard example, one-shot: one request line, then end of input, one answer echoing its id", async () => {
  assert.equal(
    await oneShot(request("bash", { command: "rm -rf /" })),
    '{"id":"1","action":"block","reason":"destructive shell command: recursive rm of /"}\n',
  );
  assert.equal(
    await oneShot(request("bash", { command: "rm -rf /tmp/build" })),
    '{"id":"1","action":"allow","reason":""}\n',
  );
  // Only shell tools are judged: a file that merely mentions a force push is written.
  assert.equal(
    await oneShot(request("write_file", { path: "NOTES.md", content: "never git push --force" })),
    '{"id":"1","action":"allow","reason":""}\n',
  );
  // A request typed by hand, without an id, is answered without one.
  assert.equal(
    await oneShot(JSON.stringify({ tool: "bash", args: { command: "ls" } })),
    '{"action":"allow","reason":""}\n',
  );
});

Deno.test("tool-guard example as a read-loop: one answer per request line, as each arrives, echoing its id", async () => {
  const child = new Deno.Command(GUARD, { stdin: "piped", stdout: "piped", stderr: "null" })
    .spawn();
  const writer = child.stdin.getWriter();
  const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let pending = "";
  const nextAnswer = async () => {
    while (!pending.includes("\n")) {
      const { value, done } = await lines.read();
      if (done) throw new Error("the guard ended early");
      pending += value;
    }
    const end = pending.indexOf("\n");
    const answer = JSON.parse(pending.slice(0, end));
    pending = pending.slice(end + 1);
    return answer;
  };
  // Each answer is read before the next request is written: the guard never waits for EOF.
  let id = 0;
  for (const [command, reason] of BLOCKED) {
    await writer.write(new TextEncoder().encode(request("bash", { command }, `${++id}`) + "\n"));
    assert.deepEqual(await nextAnswer(), {
      id: `${id}`,
      action: "block",
      reason: `destructive shell command: ${reason}`,
    }, command);
  }
  for (const [command, reason] of ASKED) {
    await writer.write(new TextEncoder().encode(request("bash", { command }, `${++id}`) + "\n"));
    const answer = await nextAnswer();
    assert.deepEqual([answer.id, answer.action, answer.reason], [`${id}`, "ask", reason], command);
  }
  for (const command of ALLOWED) {
    await writer.write(new TextEncoder().encode(request("bash", { command }, `${++id}`) + "\n"));
    assert.deepEqual(await nextAnswer(), { id: `${id}`, action: "allow", reason: "" }, command);
  }
  await writer.write(new TextEncoder().encode("not json\n"));
  assert.equal((await nextAnswer()).action, "block");
  await writer.close();
  assert.equal((await lines.read()).done, true);
  assert.equal((await child.status).code, 0);
});

Deno.test("tool-guard example asks about a force push and runs a lone git clean -f as a dry run, keeping the other args", async () => {
  assert.deepEqual(
    JSON.parse(await oneShot(request("Shell", { command: "git push -f", cwd: "/repo" }))),
    {
      id: "1",
      action: "ask",
      reason: "git push -f overwrites the remote's history",
      context: FORCE_PUSH_CONTEXT,
    },
  );
  const args = { description: 'tidy "up"', command: "git clean -fdx", timeout: 5 };
  assert.deepEqual(JSON.parse(await oneShot(request("Bash", args))), {
    id: "1",
    action: "allow",
    reason: "",
    args: { ...args, command: "git clean --dry-run -fdx" },
    context: DRY_RUN_CONTEXT,
  });
});

Deno.test("tool-guard example through tyhooks tool pre --json: the dry run's args and context, and a force push's ask", async () => {
  const run = (command: string) =>
    cli([
      "tool",
      "pre",
      "--json",
      "--tool",
      "run_shell_command",
      "--args",
      JSON.stringify({ command }),
      "--plugins-dir",
      EXAMPLES,
    ]);
  const rewritten = await run("git clean -f");
  assert.equal(rewritten.code, 0, rewritten.stderr);
  assert.deepEqual(JSON.parse(rewritten.stdout), {
    action: "allow",
    reason: "",
    args: { command: "git clean --dry-run -f" },
    context: DRY_RUN_CONTEXT,
  });
  const asked = await run("git push --force");
  assert.equal(asked.code, 2, asked.stderr);
  assert.equal(JSON.parse(asked.stdout).action, "ask");
});

Deno.test("tool-guard example through tyhooks tool pre: blocks rm -rf / (exit 2), allows the rest", async () => {
  const run = (tool: string, args: unknown) =>
    cli(["tool", "pre", "--tool", tool, "--args", JSON.stringify(args), "--plugins-dir", EXAMPLES]);
  const blocked = await run("bash", { command: "rm -rf ~" });
  assert.equal(blocked.code, 2);
  assert.deepEqual(JSON.parse(blocked.stdout), {
    action: "block",
    reason: "destructive shell command: recursive rm of ~",
  });
  const allowed = await run("bash", { command: "rm -rf /tmp/build" });
  assert.equal(allowed.code, 0, allowed.stderr);
  const file = await run("write_file", { content: "git push --force is banned" });
  assert.equal(file.code, 0, file.stderr);
  assert.equal(JSON.parse(file.stdout).action, "allow");
});

Deno.test("tool-guard example as a Claude Code PreToolUse hook: its Bash tool is judged, not skipped by the matcher", async () => {
  const r = await cli(["tool", "pre", "--claude", "--plugins-dir", EXAMPLES], {
    stdin: JSON.stringify({ tool_name: "Bash", tool_input: { command: "rm -rf /" } }),
  });
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, "destructive shell command: recursive rm of /\n");
});

Deno.test("tool-guard example in the daemon's persistent mode: one guard process answers every call", async () => {
  const daemon = await serveOn(EXAMPLES, ["--hooks-dir", join(await tempDir(), "no-hooks")]);
  try {
    const ask = async (tool: string, command: string) =>
      (await daemon.call("POST", "/v1/tool/pre", { tool, args: { command } })).body;
    assert.deepEqual(await ask("bash", "rm -rf /"), {
      action: "block",
      reason: "destructive shell command: recursive rm of /",
    });
    assert.deepEqual(await ask("bash", "rm -rf /tmp/build"), { action: "allow", reason: "" });
    assert.deepEqual(await ask("write_file", "git push --force"), { action: "allow", reason: "" });
    assert.deepEqual(await ask("bash", "git push -f"), {
      action: "ask",
      reason: "git push -f overwrites the remote's history",
      context: FORCE_PUSH_CONTEXT,
    });
    // This daemon's guards: other test modules may run the example guard at the same time.
    const guards = (await new Deno.Command("pgrep", { args: ["-P", `${daemon.pid}`, "-f", GUARD] })
      .output()).stdout;
    assert.match(new TextDecoder().decode(guards), /^\d+\n$/, "exactly one guard process");
  } finally {
    assert.equal((await daemon.stop()).code, 0);
  }
});
