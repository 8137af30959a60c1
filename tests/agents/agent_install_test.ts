/**
 * `tyhooks agent install|uninstall`: the settings it writes for each agent, in temp HOME and
 * project dirs, and the commands it writes, run by a real sh as the agents run them.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, MAIN, PERMISSION_FLAGS, ROOT, tempDir, V8_FLAGS, writeTree } from "../_cli.ts";
import { readPid, waitGone } from "../_procs.ts";
import { AGENTS, type AgentSpec, agentSpec } from "../../lib/agents/table.ts";
import { eventSpec } from "../../lib/events.ts";
import { COMMANDS } from "../../lib/cli/commands.ts";

type Settings = { hooks: Record<string, unknown[]>; [key: string]: unknown };
type Hook = { type?: string; command: string; timeout: number; failClosed?: boolean };
type Group = { matcher?: string; hooks: Hook[] };

const quote = (word: string) => `'${word.replaceAll("'", `'\\''`)}'`;

/** A temp HOME, a project in it, and a launcher that runs this checkout's tyhooks. */
async function setup() {
  const root = await Deno.realPath(await tempDir({ prefix: "tyhooks-agent-install-" }));
  const home = join(root, "home");
  const project = join(root, "project");
  const plugins = join(root, "plugins");
  const launcher = join(root, "bin", "tyhooks");
  await Deno.mkdir(home);
  await Deno.mkdir(project);
  await Deno.mkdir(plugins);
  // Says its pid (then tyhooks' own, after exec) so a test can kill tyhooks mid-decision.
  const deno = [Deno.execPath(), "run", "--quiet", ...PERMISSION_FLAGS, ...V8_FLAGS, MAIN];
  await writeTree(root, {
    "bin/tyhooks": `#!/bin/sh\necho $$ > "$0.pid"\nexec ${deno.map(quote).join(" ")} "$@"\n`,
  });
  const env = { HOME: home, TYHOOKS_LAUNCHER: launcher };
  const tyhooks = (args: string[], options: { env?: Record<string, string> } = {}) =>
    cli(["--plugins-dir", plugins, ...args], { env: { ...env, ...options.env } });
  return { root, home, project, plugins, launcher, env, tyhooks };
}

async function readJson(path: string): Promise<Settings> {
  return JSON.parse(await Deno.readTextFile(path));
}

function consulted(agent: AgentSpec, event: string): boolean {
  return eventSpec(agent.events[event]).kind === "consulted";
}

/** The hooks of `event` in the file, whatever its format. */
function hooksOf(agent: AgentSpec, settings: Settings, event: string): Hook[] {
  const list = settings.hooks[event] ?? [];
  if (agent.settingsFormat === "cursor") return list as Hook[];
  return (list as Group[]).flatMap((group) => group.hooks);
}

const FOREIGN_HOOK = { type: "command", command: "/usr/local/bin/lint-check", timeout: 5 };

Deno.test("agent install writes one entry for every event of each agent into an empty project", async () => {
  const s = await setup();
  for (const agent of AGENTS) {
    const r = await s.tyhooks(["agent", "install", agent.name, "--project", s.project]);
    assert.equal(r.code, 0, r.stderr);
    const file = join(s.project, agent.projectSettings);
    assert.match(r.stdout, new RegExp(`Wrote "${file}": ${Object.keys(agent.events).length} `));
    const settings = await readJson(file);
    assert.deepEqual(Object.keys(settings.hooks), Object.keys(agent.events));
    if (agent.settingsFormat === "cursor") assert.equal(settings.version, 1);
    for (const event of Object.keys(agent.events)) {
      const list = settings.hooks[event];
      assert.equal(list.length, 1, `${agent.name} ${event}`);
      const [hook] = hooksOf(agent, settings, event);
      assert.equal(hook.timeout, agent.timeoutUnit === "ms" ? 30_000 : 30);
      const words = `${s.launcher} --plugins-dir ${s.plugins} agent ${agent.name}`;
      if (consulted(agent, event)) {
        assert.ok(hook.command.startsWith(`${words} --deadline 25s || {`), hook.command);
        assert.match(hook.command, /tyhooks did not answer/);
      } else {
        assert.equal(hook.command, words);
      }
      if (agent.settingsFormat === "cursor") {
        assert.equal(hook.failClosed, consulted(agent, event) ? true : undefined);
        continue;
      }
      assert.equal(hook.type, "command");
      const tools = eventSpec(agent.events[event]).tools === true;
      assert.equal((list[0] as Group).matcher, tools ? "*" : undefined, `${agent.name} ${event}`);
    }
  }
  assert.equal([...Deno.readDirSync(s.home)].length, 0, "nothing in HOME");
});

Deno.test("agent install without --project writes the user's settings, Codex's under $CODEX_HOME", async () => {
  const s = await setup();
  const codexHome = join(s.root, "codex-home");
  assert.equal((await s.tyhooks(["agent", "install", "claude"])).code, 0);
  assert.ok((await readJson(join(s.home, ".claude", "settings.json"))).hooks.PreToolUse);
  const r = await s.tyhooks(["agent", "install", "codex"], { env: { CODEX_HOME: codexHome } });
  assert.equal(r.code, 0, r.stderr);
  assert.ok((await readJson(join(codexHome, "hooks.json"))).hooks.PreToolUse);
  // Codex runs untrusted hooks never: the user is told, and nothing is trusted for them.
  assert.match(r.stdout, /only once you trust them, and tyhooks does not do that for you/);
  assert.equal(await Deno.stat(join(codexHome, "config.toml")).catch(() => null), null);
  assert.equal((await s.tyhooks(["agent", "install", "codex"])).code, 0);
  assert.ok((await readJson(join(s.home, ".codex", "hooks.json"))).hooks.Stop);
});

Deno.test("agent install keeps other hooks and settings, replaces its earlier entries, and keeps a .bak", async () => {
  const s = await setup();
  const file = join(s.project, ".claude", "settings.json");
  const earlier = "/opt/old/bin/tyhooks agent claude --deadline 9s || exit 2";
  const before = {
    model: "opus",
    permissions: { allow: ["Bash(ls)"] },
    hooks: {
      PreToolUse: [
        { matcher: "Bash", hooks: [FOREIGN_HOOK] },
        { matcher: "*", hooks: [{ type: "command", command: earlier, timeout: 3 }] },
      ],
      Notification: [{ hooks: [FOREIGN_HOOK] }],
    },
  };
  const text = JSON.stringify(before, null, 4);
  await Deno.mkdir(join(s.project, ".claude"));
  await Deno.writeTextFile(file, text);
  await Deno.chmod(file, 0o640);
  const first = await s.tyhooks(["agent", "install", "claude", "--project", s.project]);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /replacing 1 earlier/);
  assert.match(first.stdout, new RegExp(`the old file is "${file}.bak"`));
  assert.equal(await Deno.readTextFile(`${file}.bak`), text);
  assert.equal((await Deno.stat(file)).mode! & 0o777, 0o640);
  const again = await s.tyhooks(["agent", "install", "claude", "--project", s.project]);
  assert.equal(again.code, 0, again.stderr);
  const after = await readJson(file);
  assert.equal(after.model, "opus");
  assert.deepEqual(after.permissions, before.permissions);
  const pre = after.hooks.PreToolUse as Group[];
  assert.equal(pre.length, 2);
  assert.deepEqual(pre[0], before.hooks.PreToolUse[0]);
  assert.equal(pre[1].hooks.length, 1);
  assert.match(pre[1].hooks[0].command, /agent claude --deadline 25s/);
  const notification = after.hooks.Notification as Group[];
  assert.deepEqual(notification[0], before.hooks.Notification[0]);
  assert.equal(notification.length, 2);
  for (const event of Object.keys(agentSpec("claude")!.events)) {
    const ours = hooksOf(agentSpec("claude")!, after, event).filter((h) =>
      h.command.includes(" agent claude")
    );
    assert.equal(ours.length, 1, event);
  }
});

Deno.test("agent install replaces the older hand-written tool pre|post --claude entries, and uninstall removes them", async () => {
  const s = await setup();
  const file = join(s.project, ".claude", "settings.json");
  const hand = (command: string) => [{ matcher: "*", hooks: [{ type: "command", command }] }];
  await Deno.mkdir(join(s.project, ".claude"));
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      hooks: {
        PreToolUse: [...hand("/usr/local/bin/tyhooks tool pre --claude"), {
          matcher: "Bash",
          hooks: [FOREIGN_HOOK],
        }],
        PostToolUse: hand("tyhooks tool post --claude"),
      },
    }),
  );
  const installed = await s.tyhooks(["agent", "install", "claude", "--project", s.project]);
  assert.equal(installed.code, 0, installed.stderr);
  const after = await readJson(file);
  for (const event of ["PreToolUse", "PostToolUse"]) {
    const commands = hooksOf(agentSpec("claude")!, after, event).map((h) => h.command);
    assert.ok(!commands.some((c) => c.includes("--claude")), `${event}: ${commands}`);
    assert.equal(commands.filter((c) => c.includes(" agent claude")).length, 1, event);
  }
  assert.ok(JSON.stringify(after).includes(FOREIGN_HOOK.command));
  await Deno.writeTextFile(
    file,
    JSON.stringify({ hooks: { PreToolUse: hand("tyhooks tool pre --claude") } }),
  );
  const removed = await s.tyhooks(["agent", "uninstall", "claude", "--project", s.project]);
  assert.equal(removed.code, 0, removed.stderr);
  assert.deepEqual(await readJson(file), {});
});

Deno.test("agent install from source runs deno with the V8 flags and main.ts by absolute path, and a later install replaces it", async () => {
  const s = await setup();
  const file = join(s.project, ".claude", "settings.json");
  const args = ["agent", "install", "claude", "--project", s.project];
  assert.equal((await s.tyhooks(args, { env: { TYHOOKS_LAUNCHER: "" } })).code, 0);
  const [hook] = hooksOf(agentSpec("claude")!, await readJson(file), "PostToolUse");
  assert.ok(hook.command.startsWith(`${Deno.execPath()} run --quiet --no-prompt `), hook.command);
  for (const flag of [...V8_FLAGS, "--allow-run", `--config ${join(ROOT, "deno.json")}`]) {
    assert.ok(hook.command.includes(` ${flag} `), `${flag} in ${hook.command}`);
  }
  assert.ok(
    hook.command.endsWith(` ${MAIN} --plugins-dir ${s.plugins} agent claude`),
  );
  const r = await s.tyhooks(args);
  assert.match(r.stdout, /replacing 10 earlier ones/);
  const after = await readJson(file);
  assert.deepEqual(hooksOf(agentSpec("claude")!, after, "PostToolUse").map((h) => h.command), [
    `${s.launcher} --plugins-dir ${s.plugins} agent claude`,
  ]);
});

Deno.test("agent install refuses a file that is not valid JSON, or whose hooks are no object, and leaves it", async () => {
  const s = await setup();
  const file = join(s.project, ".gemini", "settings.json");
  await Deno.mkdir(join(s.project, ".gemini"));
  for (const text of ['{"hooks": {"BeforeTool": [}', '{"hooks": ["BeforeTool"]}', "[1]"]) {
    await Deno.writeTextFile(file, text);
    const r = await s.tyhooks(["agent", "install", "gemini", "--project", s.project]);
    assert.equal(r.code, 1, text);
    assert.match(r.stderr, new RegExp(`Cannot change "${file}"`));
    assert.equal(await Deno.readTextFile(file), text);
    assert.equal(await Deno.stat(`${file}.bak`).catch(() => null), null);
  }
});

Deno.test("agent install says a Gemini CLI file with comments cannot be rewritten keeping them, and names a file nested too deeply to write", async () => {
  const s = await setup();
  const gemini = join(s.project, ".gemini", "settings.json");
  await Deno.mkdir(join(s.project, ".gemini"));
  await Deno.writeTextFile(gemini, '{\n  // mine\n  "theme": "dark"\n}\n');
  const commented = await s.tyhooks(["agent", "install", "gemini", "--project", s.project]);
  assert.equal(commented.code, 1);
  assert.match(commented.stderr, /hint: Gemini CLI allows comments, which a rewrite cannot keep/);
  const claude = join(s.project, ".claude", "settings.json");
  await Deno.mkdir(join(s.project, ".claude"));
  const deep = `{"deep":${"[".repeat(200_000)}${"]".repeat(200_000)}}`;
  await Deno.writeTextFile(claude, deep);
  const nested = await s.tyhooks(["agent", "install", "claude", "--project", s.project]);
  assert.equal(nested.code, 1);
  assert.match(nested.stderr, new RegExp(`Cannot change "${claude}": it is nested too deeply`));
  assert.equal(await Deno.readTextFile(claude), deep);
});

// One malformed hook entry anywhere in the file: Claude Code then skips the file whole, guards
// included, and tells only an interactive session.
const MALFORMED: [agent: string, hooks: Record<string, unknown>, named: RegExp][] = [
  ["claude", { Stop: [5] }, /"hooks\.Stop\[0\]" is a number, not a map with a "hooks" list/],
  [
    "claude",
    { PreToolUse: [{ type: "command", command: "x" }] },
    /"hooks\.PreToolUse\[0\]" has no "hooks" list/,
  ],
  [
    "claude",
    { Notification: [{ matcher: { tools: ["Bash"] }, hooks: [] }] },
    /"matcher" that is a map/,
  ],
  [
    "gemini",
    { BeforeTool: [{ hooks: [{ type: "command" }] }] },
    /command hook \(0\) without a "command"/,
  ],
  ["cursor", { stop: [null] }, /"hooks\.stop\[0\]" is empty, not a map with a "command" string/],
];

Deno.test("agent install refuses a file holding a malformed hook entry, naming it, and leaves the file", async () => {
  const s = await setup();
  for (const [name, hooks, named] of MALFORMED) {
    const agent = agentSpec(name)!;
    const file = join(s.project, agent.projectSettings);
    const text = JSON.stringify({ hooks }, null, 2);
    await Deno.mkdir(join(file, ".."), { recursive: true });
    await Deno.writeTextFile(file, text);
    const r = await s.tyhooks(["agent", "install", name, "--project", s.project]);
    assert.equal(r.code, 1, `${name}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`Cannot change "${file}": `));
    assert.match(r.stderr, named);
    assert.equal(await Deno.readTextFile(file), text);
  }
});

Deno.test("agent install --dry-run prints the resulting file and writes nothing", async () => {
  const s = await setup();
  const r = await s.tyhooks(["agent", "install", "cursor", "--project", s.project, "--dry-run"]);
  assert.equal(r.code, 0, r.stderr);
  const printed = JSON.parse(r.stdout) as Settings;
  assert.equal(printed.version, 1);
  assert.equal(hooksOf(agentSpec("cursor")!, printed, "preToolUse")[0].failClosed, true);
  assert.deepEqual([...Deno.readDirSync(s.project)], []);
  const file = join(s.project, ".cursor", "hooks.json");
  await s.tyhooks(["agent", "install", "cursor", "--project", s.project]);
  const text = await Deno.readTextFile(file);
  const u = await s.tyhooks(["agent", "uninstall", "cursor", "--project", s.project, "--dry-run"]);
  assert.equal(u.code, 0, u.stderr);
  assert.deepEqual(JSON.parse(u.stdout), { version: 1 });
  assert.equal(await Deno.readTextFile(file), text);
  assert.equal(await Deno.stat(`${file}.bak`).catch(() => null), null);
});

Deno.test("agent uninstall leaves exactly the hooks and settings that are not tyhooks'", async () => {
  const s = await setup();
  const file = join(s.project, ".codex", "hooks.json");
  const foreign = {
    hooks: {
      PreToolUse: [{ matcher: "Bash", hooks: [FOREIGN_HOOK] }],
      Stop: [{ hooks: [FOREIGN_HOOK] }],
    },
    note: "kept",
  };
  await Deno.mkdir(join(s.project, ".codex"));
  await Deno.writeTextFile(file, JSON.stringify(foreign));
  assert.equal((await s.tyhooks(["agent", "install", "codex", "--project", s.project])).code, 0);
  // A tyhooks hook inside a group of the user's: the group stays with the user's hook only.
  const installed = await readJson(file);
  (installed.hooks.Stop[0] as Group).hooks.push({
    type: "command",
    command: `${s.launcher} agent codex`,
    timeout: 1,
  });
  await Deno.writeTextFile(file, JSON.stringify(installed));
  const r = await s.tyhooks(["agent", "uninstall", "codex", "--project", s.project]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /removed 8 tyhooks entries/);
  assert.deepEqual(await readJson(file), foreign);
  const none = await s.tyhooks(["agent", "uninstall", "codex", "--project", s.project]);
  assert.equal(none.code, 0);
  assert.match(none.stdout, /Nothing to remove/);
  // Nothing but tyhooks in the file: what it leaves is empty.
  assert.equal((await s.tyhooks(["agent", "install", "claude", "--project", s.project])).code, 0);
  assert.equal((await s.tyhooks(["agent", "uninstall", "claude", "--project", s.project])).code, 0);
  assert.deepEqual(await readJson(join(s.project, ".claude", "settings.json")), {});
});

Deno.test("agent install names an unknown agent with the one that was probably meant, and a missing project dir", async () => {
  const s = await setup();
  const r = await s.tyhooks(["agent", "install", "claud"]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Unknown agent "claud"\nhint: did you mean "claude"\?/);
  const missing = join(s.root, "no-such-project");
  const p = await s.tyhooks(["agent", "install", "claude", "--project", missing]);
  assert.equal(p.code, 64);
  assert.match(p.stderr, /No such project dir/);
  assert.equal(await Deno.stat(missing).catch(() => null), null);
});

// ---- The consulted command, run as the agents run it: `sh -c COMMAND`, the hook JSON on stdin.

const PRE_TOOL_USE = JSON.stringify({
  session_id: "s1",
  transcript_path: "/tmp/t.jsonl",
  cwd: "/work",
  hook_event_name: "PreToolUse",
  tool_name: "Bash",
  tool_input: { command: "rm -rf /" },
});

// Until `tyhooks agent AGENT` is a command, `tool pre --claude` reads the same payload.
const AGENT_COMMAND = COMMANDS.some((command) => command.name === "agent");

/** The PreToolUse command `agent install claude` wrote, with the plugins dir holding `guard`. */
async function preToolCommand(guard: string) {
  const s = await setup();
  await writeTree(s.plugins, {
    "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
    "guard/guard.sh": guard,
  });
  const r = await s.tyhooks(["agent", "install", "claude", "--project", s.project]);
  assert.equal(r.code, 0, r.stderr);
  const settings = await readJson(join(s.project, ".claude", "settings.json"));
  let command = (settings.hooks.PreToolUse[0] as Group).hooks[0].command;
  if (!AGENT_COMMAND) command = command.replace(" agent claude ", " tool pre --claude ");
  return { s, command };
}

function runHook(command: string, env: Record<string, string>): Deno.ChildProcess {
  const child = new Deno.Command("sh", {
    args: ["-c", command],
    env,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  // A hook that never starts reads nothing: a broken pipe is its business, not the test's.
  writer.write(new TextEncoder().encode(PRE_TOOL_USE)).then(() => writer.close()).catch(() => {});
  return child;
}

async function outcome(child: Deno.ChildProcess) {
  const out = await child.output();
  const text = new TextDecoder();
  return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
}

const BLOCKING_GUARD = `#!/bin/sh
cat >/dev/null
echo '{"action":"block","reason":"no rm, please"}'
`;

Deno.test("the consulted command blocks with the guard's reason alone when tyhooks answers", async () => {
  const { s, command } = await preToolCommand(BLOCKING_GUARD);
  const r = await outcome(runHook(command, s.env));
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.equal(r.stderr, "no rm, please\n");
});

Deno.test("the consulted command blocks when tyhooks is gone, saying so on stderr", async () => {
  const { s, command } = await preToolCommand(BLOCKING_GUARD);
  await Deno.remove(s.launcher);
  const r = await outcome(runHook(command, s.env));
  assert.equal(r.code, 2);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /tyhooks did not answer \(exit 127\): blocking\n$/);
});

Deno.test("the consulted command blocks when tyhooks is killed by SIGKILL mid-decision", async () => {
  const { s, command } = await preToolCommand(`#!/bin/sh
echo $$ > "$TASK_PLUGIN_DIR/../guard.pid"
exec sleep 60
`);
  const child = runHook(command, s.env);
  const guard = await readPid(join(s.plugins, "guard.pid"), 60_000);
  try {
    Deno.kill(await readPid(`${s.launcher}.pid`), "SIGKILL");
    const r = await outcome(child);
    assert.equal(r.code, 2);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /tyhooks did not answer \(exit 137\): blocking\n$/);
  } finally {
    try {
      Deno.kill(guard, "SIGKILL");
    } catch {
      // Already gone.
    }
    await waitGone(guard);
  }
});

Deno.test("agent install and uninstall leave a read-only settings file as it is, saying how to allow it", async () => {
  const s = await setup();
  const file = join(s.project, ".claude", "settings.json");
  await Deno.mkdir(join(s.project, ".claude"));
  await Deno.writeTextFile(file, '{"theme":"dark"}\n');
  for (const command of ["install", "uninstall"]) {
    // Uninstall has tyhooks' entries to take out: the install's, made while it was writable.
    if (command === "uninstall") {
      await Deno.chmod(file, 0o644);
      assert.equal(
        (await s.tyhooks(["agent", "install", "claude", "--project", s.project])).code,
        0,
      );
    }
    await Deno.chmod(file, 0o444);
    const before = await Deno.readTextFile(file);
    const r = await s.tyhooks(["agent", command, "claude", "--project", s.project]);
    assert.equal(r.code, 1, `${command}: ${r.stderr}`);
    assert.match(r.stderr, /it is read-only \(mode 0444\)\nhint: chmod u\+w /, command);
    assert.equal(await Deno.readTextFile(file), before, command);
  }
});
