import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, type CliResult, makeTree, tempDir, writeTree } from "../_cli.ts";
import { startServe } from "./_serve.ts";

const GOOD_PLUGIN = {
  "notify/plugin.yaml": "name: notify\nhooks:\n  task.done: done.sh\n",
  "notify/done.sh": "#!/bin/sh\nexit 0\n",
};

/** A home of its own (config, cache, state, runtime dirs), a project dir, and a stand-in tyhooks. */
interface Setup {
  home: string;
  project: string;
  plugins: string;
  /** An executable file standing for tyhooks in agent settings. */
  tyhooks: string;
  env: Record<string, string>;
}

async function setup(plugins: Record<string, string> = GOOD_PLUGIN): Promise<Setup> {
  const home = await tempDir({ prefix: "tyhooks-doctor-home-" });
  const project = join(home, "project");
  const runtime = join(home, "run");
  await writeTree(home, {
    "project/.keep": "",
    "bin/tyhooks": "#!/bin/sh\nexit 0\n",
  });
  await Deno.mkdir(runtime, { mode: 0o700 });
  return {
    home,
    project,
    plugins: await makeTree(plugins),
    tyhooks: join(home, "bin", "tyhooks"),
    env: {
      HOME: home,
      XDG_CONFIG_HOME: join(home, ".config"),
      XDG_CACHE_HOME: join(home, ".cache"),
      XDG_STATE_HOME: join(home, ".local", "state"),
      XDG_RUNTIME_DIR: runtime,
      TY_PLUGINS_DIR: "",
      TYHOOKS_DAEMON: "",
      CODEX_HOME: "",
    },
  };
}

async function doctor(s: Setup, args: string[] = [], env: Record<string, string> = {}) {
  const r = await cli(["doctor", "--plugins-dir", s.plugins, ...args], {
    cwd: s.project,
    env: { ...s.env, ...env },
  });
  if (!args.includes("--json")) everyProblemHasAFix(r);
  return r;
}

function everyProblemHasAFix(r: CliResult): void {
  for (const line of r.stdout.trimEnd().split("\n")) {
    assert.match(line, /^(ok {2}|warn|fail) {2}\S/, line);
    if (!line.startsWith("ok")) assert.match(line, /; fix: \S/, line);
  }
}

function failures(r: CliResult): string[] {
  return r.stdout.split("\n").filter((line) => line.startsWith("fail"));
}

// Claude Code's settings as `agent install` writes them: the guard fail-closed, the rest plain.
function claudeSettings(pre: string, post: string): string {
  const entry = (command: string) => [{
    matcher: "*",
    hooks: [{ type: "command", command, timeout: 30 }],
  }];
  return JSON.stringify({
    model: "kept",
    hooks: { PreToolUse: entry(pre), PostToolUse: entry(post) },
  });
}

function failClosed(program: string): string {
  return `'${program}' agent claude --deadline 25s || ` +
    `{ echo "tyhooks did not answer (exit $?): blocking" >&2; exit 2; }`;
}

Deno.test("doctor passes a healthy setup with exit 0, one ok line per check", async () => {
  const s = await setup();
  await writeTree(s.project, {
    // Every word quoted, as sh reads it the same.
    ".claude/settings.json": claudeSettings(
      failClosed(s.tyhooks),
      `'${s.tyhooks}' 'agent' 'claude'`,
    ),
  });
  const r = await doctor(s);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(failures(r), []);
  assert.match(r.stdout, /^ok {4}plugins: 1 plugin, and plugins validate finds no problem$/m);
  assert.match(r.stdout, /^ok {4}runtime: Deno \d+\.\d+\.\d+/m);
  assert.match(r.stdout, /^ok {4}grants: /m);
  assert.match(r.stdout, /^ok {4}daemon: none on /m);
  assert.match(
    r.stdout,
    /^ok {4}agent claude: .*PreToolUse, PostToolUse run tyhooks by an absolute path/m,
  );
  assert.match(r.stderr, /checks: \d+ ok, 0 warned, 0 failed/);
});

Deno.test("doctor --json prints every check with its name, status, detail and fix", async () => {
  const s = await setup({
    ...GOOD_PLUGIN,
    "crlf/plugin.yaml": "name: crlf\nhooks:\n  task.done: done.sh\n",
    "crlf/done.sh": "#!/bin/sh\r\nexit 0\r\n",
  });
  const r = await doctor(s, ["--json"]);
  assert.equal(r.code, 1, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.equal(doc.ok, false);
  assert.deepEqual(Object.keys(doc).sort(), ["checks", "ok"]);
  for (const check of doc.checks) {
    assert.deepEqual(Object.keys(check).sort(), ["detail", "fix", "name", "status"]);
    assert.ok(["ok", "warn", "fail"].includes(check.status), check.status);
    assert.equal(check.fix === null, check.status === "ok", JSON.stringify(check));
  }
  const crlf = doc.checks.find((c: { detail: string }) => c.detail.includes("carriage return"));
  assert.equal(crlf.status, "fail");
  assert.match(crlf.detail, /\/crlf\/plugin\.yaml:3:14: /);
  assert.match(crlf.fix, /^dos2unix ".*\/crlf\/done\.sh"/);
});

const SCRIPT_CASES: { what: string; script: string; mode: number; fix: RegExp; says: RegExp }[] = [
  {
    what: "a script with CRLF line ends",
    script: "#!/bin/sh\r\nexit 0\r\n",
    mode: 0o755,
    says: /carriage return/,
    fix: /; fix: dos2unix ".*\/bad\/hook\.sh"/,
  },
  {
    what: "a script without a #! line",
    script: "exit 0\n",
    mode: 0o755,
    says: /does not start with a "#!" line/,
    fix: /; fix: make its first line "#!\/bin\/sh"/,
  },
  {
    what: "a script that is not executable",
    script: "#!/bin/sh\nexit 0\n",
    mode: 0o644,
    says: /not executable/,
    fix: /; fix: chmod \+x ".*\/bad\/hook\.sh"/,
  },
];

for (const c of SCRIPT_CASES) {
  Deno.test(`doctor fails on ${c.what}, naming it with the fix`, async () => {
    const s = await setup({
      ...GOOD_PLUGIN,
      "bad/plugin.yaml": "name: bad\nhooks:\n  task.done: hook.sh\n",
      "bad/hook.sh": c.script,
    });
    await Deno.chmod(join(s.plugins, "bad", "hook.sh"), c.mode);
    const r = await doctor(s);
    assert.equal(r.code, 1, r.stdout);
    // A hook dropped for not being executable also leaves its plugin without a hook: the line
    // that names the script is the one at the hook's entry.
    const named = failures(r).filter((line) => line.includes("/bad/plugin.yaml:3:14: "));
    assert.equal(named.length, 1, r.stdout);
    assert.match(named[0], /^fail {2}plugin: /);
    assert.match(named[0], c.says);
    assert.match(named[0], c.fix);
  });
}

Deno.test("doctor's fix for a problem without a hint names the file, then the line", async () => {
  const s = await setup({
    ...GOOD_PLUGIN,
    "two/plugin.yaml": "name: two\nhooks:\n  task.done: hook.sh\n---\nname: other\n",
    "two/hook.sh": "#!/bin/sh\n",
  });
  await Deno.chmod(join(s.plugins, "two", "hook.sh"), 0o755);
  const r = await doctor(s);
  const named = failures(r).filter((line) => line.includes("/two/plugin.yaml:4:1: "));
  assert.equal(named.length, 1, r.stdout);
  assert.match(
    named[0],
    /; fix: edit ".*\/two\/plugin\.yaml" at line 4, then: tyhooks plugins validate$/,
  );
});

Deno.test("doctor fails on a legacy hook without a #! line", async () => {
  const s = await setup();
  await writeTree(s.env.XDG_CONFIG_HOME, { "task/hooks/task.done": "echo done\n" });
  await Deno.chmod(join(s.env.XDG_CONFIG_HOME, "task", "hooks", "task.done"), 0o755);
  const r = await doctor(s);
  assert.equal(r.code, 1, r.stdout);
  assert.match(
    r.stdout,
    /^fail {2}legacy hook: .*\/task\/hooks\/task\.done: Legacy hook "task\.done" does not start with a "#!" line.*; fix: make its first line/m,
  );
});

const AGENT_CASES: {
  what: string;
  settings: (s: Setup) => string;
  says: RegExp;
  /** The fix every failing line gives, when it is not `agent install`. */
  fix?: RegExp;
}[] = [
  {
    what: "an agent settings entry that runs tyhooks by a relative path",
    settings: () => claudeSettings(failClosed("bin/tyhooks"), "bin/tyhooks agent claude"),
    says: /PreToolUse, PostToolUse run tyhooks as "bin\/tyhooks", not by an absolute path/,
  },
  {
    what: "an agent settings entry that names tyhooks through a shell variable, not fail-closed",
    settings: () =>
      claudeSettings("$HOME/bin/tyhooks agent claude", "$HOME/bin/tyhooks agent claude"),
    says: /PreToolUse are not in the fail-closed form/,
  },
  {
    what: "an agent settings entry that runs a bare tyhooks from PATH",
    settings: () => claudeSettings("tyhooks tool pre --claude", "tyhooks tool post --claude"),
    says: /PreToolUse, PostToolUse run tyhooks as "tyhooks", not by an absolute path/,
  },
  {
    what: "an agent settings entry naming a tyhooks that does not exist",
    settings: (s) =>
      claudeSettings(failClosed(`${s.home}/gone/tyhooks`), `'${s.tyhooks}' agent claude`),
    says: /PreToolUse run tyhooks as ".*\/gone\/tyhooks", which does not exist/,
  },
  {
    what: "a guard entry that is not fail-closed",
    settings: (s) =>
      claudeSettings(`'${s.tyhooks}' agent claude --deadline 25s`, `'${s.tyhooks}' agent claude`),
    says: /PreToolUse are not in the fail-closed form/,
  },
  {
    what: "agent settings whose tyhooks guard is fine but another entry is malformed",
    settings: (s) => {
      const settings = JSON.parse(
        claudeSettings(failClosed(s.tyhooks), `'${s.tyhooks}' agent claude`),
      );
      settings.hooks.Stop = [{ type: "command", command: "notify-send done" }];
      return JSON.stringify(settings);
    },
    says:
      /"hooks\.Stop\[0\]" has no "hooks" list, so the agent may skip the whole file, tyhooks' hooks with it/,
    fix: /; fix: correct or remove that entry of ".*\/\.claude\/settings\.json"$/,
  },
  {
    what: "agent settings that are not JSON",
    settings: () => '{"hooks": {',
    says: /Claude Code settings ".*\/\.claude\/settings\.json" is not valid JSON/,
    fix: /; fix: correct the JSON of ".*\/\.claude\/settings\.json"$/,
  },
];

for (const c of AGENT_CASES) {
  Deno.test(`doctor fails on ${c.what}, with the fix`, async () => {
    const s = await setup();
    await writeTree(s.project, { ".claude/settings.json": c.settings(s) });
    const r = await doctor(s);
    assert.equal(r.code, 1, r.stdout);
    const lines = failures(r);
    assert.ok(lines.length > 0, r.stdout);
    for (const line of lines) {
      assert.match(line, /^fail {2}agent claude: /);
      assert.match(line, c.fix ?? /; fix: tyhooks agent install claude --project \.$/);
    }
    assert.ok(lines.some((line) => c.says.test(line)), r.stdout);
  });
}

Deno.test("doctor checks an agent's user settings in the home dir, with the fix for them", async () => {
  const s = await setup();
  await writeTree(s.home, {
    ".gemini/settings.json": JSON.stringify({
      hooks: {
        BeforeTool: [{
          matcher: "*",
          hooks: [{ type: "command", command: "tyhooks agent gemini" }],
        }],
      },
    }),
  });
  const r = await doctor(s);
  assert.equal(r.code, 1, r.stdout);
  assert.match(
    r.stdout,
    /^fail {2}agent gemini: Gemini CLI settings ".*\/\.gemini\/settings\.json": BeforeTool run tyhooks as "tyhooks".*; fix: tyhooks agent install gemini$/m,
  );
});

Deno.test("doctor is content with a daemon on the same plugins dir, and fails on one serving another", async () => {
  const s = await setup();
  const socket = join(s.env.XDG_RUNTIME_DIR, "tyhooks.sock");
  const other = await makeTree(GOOD_PLUGIN);
  {
    await using _daemon = await startServe([
      "--listen",
      `unix:${socket}`,
      "--plugins-dir",
      s.plugins,
    ], {
      env: s.env,
    });
    const r = await doctor(s);
    assert.equal(r.code, 0, r.stdout);
    assert.match(
      r.stdout,
      /^ok {4}daemon: answers on ".*tyhooks\.sock", serving the same plugins dir/m,
    );
  }
  await using _daemon = await startServe(["--listen", `unix:${socket}`, "--plugins-dir", other], {
    env: s.env,
  });
  const r = await doctor(s, [], { TYHOOKS_DAEMON: `unix:${socket}` });
  assert.equal(r.code, 1, r.stdout);
  const lines = failures(r);
  assert.equal(lines.length, 1, r.stdout);
  assert.match(
    lines[0],
    /^fail {2}daemon: the daemon on ".*tyhooks\.sock" serves the plugins dir ".*", not ".*"/,
  );
  assert.ok(
    lines[0].includes(
      `; fix: stop the daemon on "${socket}", then start it again: tyhooks serve --plugins-dir "${s.plugins}"`,
    ),
    lines[0],
  );
});

Deno.test("doctor checks Codex's user hooks in ~/.codex, and in $CODEX_HOME when it is set", async () => {
  const s = await setup();
  const hooks = JSON.stringify({
    hooks: {
      PreToolUse: [{ matcher: "*", hooks: [{ type: "command", command: "tyhooks agent codex" }] }],
    },
  });
  await writeTree(s.home, { ".codex/hooks.json": hooks, "elsewhere/hooks.json": hooks });
  const fails = /^fail {2}agent codex: Codex settings "(.*)": PreToolUse run tyhooks as "tyhooks"/m;
  const home = await doctor(s);
  assert.equal(home.code, 1, home.stdout);
  assert.equal(fails.exec(home.stdout)?.[1], join(s.home, ".codex", "hooks.json"));
  const set = await doctor(s, [], { CODEX_HOME: join(s.home, "elsewhere") });
  assert.equal(fails.exec(set.stdout)?.[1], join(s.home, "elsewhere", "hooks.json"));
});

Deno.test("doctor checks the decision log without making it", async () => {
  const s = await setup();
  const r = await doctor(s);
  assert.match(r.stdout, /^ok {4}decision log: /m);
  await assert.rejects(Deno.lstat(join(s.env.XDG_STATE_HOME, "tyhooks")), Deno.errors.NotFound);
  const off = await doctor(s, [], { TYHOOKS_DECISION_LOG: "off" });
  assert.match(off.stdout, /^ok {4}decision log: turned off by TYHOOKS_DECISION_LOG=off/m);
});

const DECISION_LOG_CASES: { what: string; make: (log: string) => Promise<void>; says: RegExp }[] = [
  {
    what: "a FIFO",
    make: (log) => new Deno.Command("mkfifo", { args: [log] }).output().then(() => {}),
    says: /the decision log ".*\/decisions\.log" is not a regular file/,
  },
  {
    what: "a directory",
    make: (log) => Deno.mkdir(log),
    says: /the decision log ".*\/decisions\.log" is not a regular file/,
  },
  {
    what: "a symlink",
    make: async (log) => {
      await Deno.writeTextFile(`${log}.real`, "", { mode: 0o600 });
      await Deno.symlink(`${log}.real`, log);
    },
    says: /the decision log ".*\/decisions\.log" is a symbolic link, not followed/,
  },
  {
    what: "in a dir others can write",
    make: (log) => Deno.chmod(join(log, ".."), 0o777),
    says: /the decision log's dir ".*\/tyhooks" is writable by group or others \(mode 0777\)/,
  },
];

for (const c of DECISION_LOG_CASES) {
  Deno.test(`doctor warns about a decision log that is ${c.what}, as every decision would`, async () => {
    const s = await setup({
      ...GOOD_PLUGIN,
      "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
      "guard/guard.sh": "#!/bin/sh\nexit 0\n",
    });
    const log = join(s.env.XDG_STATE_HOME, "tyhooks", "decisions.log");
    await Deno.mkdir(join(log, ".."), { recursive: true, mode: 0o700 });
    await c.make(log);
    const r = await doctor(s);
    const line = r.stdout.split("\n").find((l) => l.includes("decision log: "));
    assert.match(
      line ?? "",
      /^warn {2}decision log: cannot be written, so every decision warns: /,
      r.stdout,
    );
    assert.match(line!, c.says);
    // What a decision says about the same log.
    const tool = await cli(["tool", "pre", "--tool", "bash", "--plugins-dir", s.plugins], {
      env: s.env,
    });
    assert.match(tool.stderr, c.says);
  });
}

const UNUSABLE_SPOOL_CASES: {
  what: string;
  make: (spool: string) => Promise<void>;
  says: RegExp;
}[] = [
  {
    what: "a symlink to an empty dir",
    make: async (spool) => {
      await Deno.mkdir(`${spool}.real`, { mode: 0o700 });
      await Deno.symlink(`${spool}.real`, spool);
    },
    says: /the spool dir ".*\/spool" is a symbolic link, not followed/,
  },
  {
    what: "an empty dir of mode 0770",
    make: async (spool) => {
      await Deno.mkdir(spool);
      await Deno.chmod(spool, 0o770);
    },
    says: /the spool dir ".*\/spool" is writable by group or others \(mode 0770\)/,
  },
];

for (const c of UNUSABLE_SPOOL_CASES) {
  Deno.test(`doctor fails on a spool that is ${c.what}, naming why as spool list does`, async () => {
    const s = await setup();
    const spool = join(s.env.XDG_STATE_HOME, "tyhooks", "spool");
    await Deno.mkdir(join(spool, ".."), { recursive: true, mode: 0o700 });
    await c.make(spool);
    const list = await cli(["spool", "list"], { env: s.env });
    assert.equal(list.code, 1, list.stderr);
    const refusal = /^tyhooks: (Cannot use the spool: .*)$/m.exec(list.stderr)![1];
    assert.match(refusal, c.says);
    const r = await doctor(s);
    assert.equal(r.code, 1, r.stdout);
    const line = failures(r).find((l) => l.startsWith("fail  spool: "));
    assert.ok(line?.includes(refusal), r.stdout);
  });
}

Deno.test("doctor fails on a daemon that takes connections but does not answer: guarded calls wait for it, then block", async () => {
  const s = await setup();
  const socket = join(s.env.XDG_RUNTIME_DIR, "tyhooks.sock");
  await using daemon = await startServe(
    ["--listen", `unix:${socket}`, "--plugins-dir", s.plugins],
    {
      env: s.env,
    },
  );
  // Stopped: the kernel still takes connections for it, and nothing answers them.
  Deno.kill(daemon.pid, "SIGSTOP");
  let r: CliResult;
  try {
    r = await doctor(s);
  } finally {
    Deno.kill(daemon.pid, "SIGCONT");
  }
  assert.equal(r.code, 1, r.stdout);
  const line = failures(r).find((l) => l.startsWith("fail  daemon: "));
  assert.match(
    line ?? r.stdout,
    /takes connections on ".*tyhooks\.sock" but did not answer .* within 2 s: guarded calls .* wait for it until their deadline, then block/,
  );
  assert.doesNotMatch(r.stdout, /decide in-process/);
});
