import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, ROOT, tempDir } from "./_cli.ts";
import { serveOn } from "./cli/_serve.ts";
import {
  appendDecisionLine,
  cut,
  type DecisionRecord,
  jsonPrefix,
  MAX_DECISION_LOG_BYTES,
} from "../lib/log.ts";
import { readDecisionLine } from "../lib/cli/log.ts";

// SPEC "Decision log".

const FIELDS = [
  "agent",
  "args",
  "decision",
  "event",
  "ms",
  "pid",
  "plugin",
  "reason",
  "task_id",
  "tool",
  "ts",
];

/** A home and state dir of the test's own; the log's path in it. */
async function homes(): Promise<{ env: Record<string, string>; log: string }> {
  const home = await tempDir({ prefix: "tyhooks-home-" });
  const state = join(home, "state");
  return {
    env: { HOME: home, XDG_CACHE_HOME: join(home, "cache"), XDG_STATE_HOME: state },
    log: join(state, "tyhooks", "decisions.log"),
  };
}

async function records(log: string): Promise<Record<string, unknown>[]> {
  const text = await Deno.readTextFile(log);
  assert.ok(text.endsWith("\n"), text);
  return text.trimEnd().split("\n").map((line) => JSON.parse(line));
}

const PLUGINS = {
  "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
  "guard/guard.sh": "#!/bin/sh\necho 'no rm here' >&2\nexit 2\n",
  "router/plugin.yaml": "name: router\nhooks:\n  task.route: route.sh\n",
  "router/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/profiles/work\necho REASON=quota\n",
  "placer/plugin.yaml": "name: placer\nhooks:\n  task.placement: place.sh\n",
  "placer/place.sh": `#!/bin/sh\necho '{"target":"gpu-2","workdir":"~/w","reason":"free"}'\n`,
};

const PRE = ["tool", "pre", "--tool", "bash", "--args", '{"command":"rm -rf /"}'];

Deno.test("a blocked tool pre leaves one line with every field, in a 0600 log in a 0700 dir", async () => {
  const plugins = await makeTree(PLUGINS);
  const { env, log } = await homes();
  const before = Date.now();
  const r = await cli([...PRE, "--platform", "claude-code", "--plugins-dir", plugins], { env });
  assert.equal(r.code, 2, r.stderr);
  const [record, ...more] = await records(log);
  assert.deepEqual(more, []);
  assert.deepEqual(Object.keys(record).sort(), FIELDS);
  const { ts, ms, pid, ...rest } = record;
  assert.deepEqual(rest, {
    event: "pre_tool_call",
    agent: "claude-code",
    tool: "bash",
    args: '{"command":"rm -rf /"}',
    task_id: null,
    decision: "block",
    reason: "no rm here",
    plugin: "guard",
  });
  assert.ok(Date.parse(ts as string) >= before - 1000, String(ts));
  assert.ok(typeof ms === "number" && ms >= 0);
  assert.ok(typeof pid === "number" && pid > 0);
  assert.equal((await Deno.stat(log)).mode! & 0o777, 0o600);
  assert.equal((await Deno.stat(join(log, ".."))).mode! & 0o777, 0o700);
});

/** A consulted call on PLUGINS, and the fields of the one line it leaves. */
const ONE_LINE: { name: string; args: string[]; fields: Record<string, unknown> }[] = [
  {
    name: "a route leaves one line naming the profile, the router and the task",
    args: ["route", "--task-json", '{"id":42}'],
    fields: {
      event: "task.route",
      task_id: 42,
      decision: "/profiles/work",
      reason: "quota",
      plugin: "router",
      tool: "",
      args: "",
    },
  },
  {
    name: "a place leaves one line naming the target and the handler",
    args: ["place", "--task-json", '{"id":7}'],
    fields: {
      event: "task.placement",
      task_id: 7,
      decision: "gpu-2",
      reason: "free",
      plugin: "placer",
    },
  },
];

for (const { name, args, fields } of ONE_LINE) {
  Deno.test(name, async () => {
    const plugins = await makeTree(PLUGINS);
    const { env, log } = await homes();
    const r = await cli([...args, "--plugins-dir", plugins], { env });
    assert.equal(r.code, 0, r.stderr);
    const [record, ...more] = await records(log);
    assert.deepEqual(more, []);
    assert.deepEqual(Object.keys(record).sort(), FIELDS);
    for (const [field, value] of Object.entries(fields)) assert.equal(record[field], value, field);
  });
}

Deno.test("the daemon's decisions go to the log too, a removed or rotated log replaced", async () => {
  const plugins = await makeTree(PLUGINS);
  const { env, log } = await homes();
  await using daemon = await serveOn(plugins, [], { env });
  const answer = await daemon.call("POST", "/v1/tool/pre", { tool: "bash", args: { n: 1 } });
  assert.equal(answer.body.action, "block");
  const [record] = await records(log);
  assert.equal(record.event, "pre_tool_call");
  assert.equal(record.args, '{"n":1}');
  assert.equal(record.pid, daemon.pid);
  // Removed while the daemon runs: the next decision starts a new log.
  await Deno.remove(log);
  await daemon.call("POST", "/v1/tool/pre", { tool: "bash", args: { n: 2 } });
  assert.deepEqual((await records(log)).map((r) => r.args), ['{"n":2}']);
  // Past the bound and rotated by another writer: one more line to the old file, then the new.
  await Deno.writeTextFile(log, "x".repeat(MAX_DECISION_LOG_BYTES) + "\n", { append: true });
  await Deno.rename(log, `${log}.1`);
  await daemon.call("POST", "/v1/tool/pre", { tool: "bash", args: { n: 3 } });
  await daemon.call("POST", "/v1/tool/pre", { tool: "bash", args: { n: 4 } });
  const old = (await Deno.readTextFile(`${log}.1`)).trimEnd().split("\n");
  assert.equal(JSON.parse(old.at(-1)!).args, '{"n":3}');
  assert.deepEqual((await records(log)).map((r) => r.args), ['{"n":4}']);
});

Deno.test("a call no hook was asked about leaves no line", async () => {
  const { env, log } = await homes();
  const r = await cli([...PRE, "--plugins-dir", await makeTree({})], { env });
  assert.equal(r.code, 0, r.stderr);
  await assert.rejects(Deno.stat(log), Deno.errors.NotFound);
});

Deno.test("TYHOOKS_DECISION_LOG=off leaves no file", async () => {
  const plugins = await makeTree(PLUGINS);
  const { env, log } = await homes();
  const off = { ...env, TYHOOKS_DECISION_LOG: "off" };
  assert.equal((await cli([...PRE, "--plugins-dir", plugins], { env: off })).code, 2);
  assert.equal((await cli(["route", "--plugins-dir", plugins], { env: off })).code, 0);
  await assert.rejects(Deno.stat(join(log, "..")), Deno.errors.NotFound);
});

Deno.test("a log that reached 4 MiB is moved to decisions.log.1, replacing the one before", async () => {
  const plugins = await makeTree(PLUGINS);
  const { env, log } = await homes();
  await Deno.mkdir(join(log, ".."), { recursive: true, mode: 0o700 });
  await Deno.writeTextFile(`${log}.1`, "the oldest\n", { mode: 0o600 });
  const filler = `${"x".repeat(1023)}\n`.repeat(MAX_DECISION_LOG_BYTES / 1024 - 1);
  await Deno.writeTextFile(log, filler, { mode: 0o600 });
  // Below the bound after this one: kept; past it after the next: moved.
  assert.equal((await cli([...PRE, "--plugins-dir", plugins], { env })).code, 2);
  assert.equal(await Deno.readTextFile(`${log}.1`), "the oldest\n");
  await Deno.writeTextFile(log, filler.slice(0, 1024), { append: true });
  assert.equal((await cli([...PRE, "--plugins-dir", plugins], { env })).code, 2);
  const rotated = await Deno.readTextFile(`${log}.1`);
  assert.ok(rotated.startsWith(filler));
  assert.equal(rotated.trimEnd().split("\n").filter((l) => l.startsWith("{")).length, 2);
  await assert.rejects(Deno.stat(log), Deno.errors.NotFound);
  assert.equal((await cli(["route", "--plugins-dir", plugins], { env })).code, 0);
  assert.equal((await records(log)).length, 1);
  assert.deepEqual(
    [...Deno.readDirSync(join(log, ".."))].map((e) => e.name).sort(),
    ["decisions.log", "decisions.log.1"],
  );
});

Deno.test("an unusable log dir leaves the decision unchanged, with one warning", async () => {
  const plugins = await makeTree(PLUGINS);
  const { env, log } = await homes();
  const off = await cli([...PRE, "--plugins-dir", plugins], {
    env: { ...env, TYHOOKS_DECISION_LOG: "off" },
  });
  // Writable by everyone: whoever could write there could forge the log.
  await Deno.mkdir(join(log, ".."), { recursive: true });
  await Deno.chmod(join(log, ".."), 0o777);
  const r = await cli([...PRE, "--plugins-dir", plugins], { env });
  assert.equal(r.code, off.code);
  assert.equal(r.stdout, off.stdout);
  const warnings = r.stderr.split("\n").filter((l) => l.includes("decision log"));
  assert.equal(warnings.length, 1, r.stderr);
  assert.match(warnings[0], /^tyhooks: warn: Cannot write the decision log: .* writable by group/);
  await assert.rejects(Deno.stat(log), Deno.errors.NotFound);
  // The route answers the same way.
  const routed = await cli(["route", "--plugins-dir", plugins], { env });
  assert.match(routed.stdout, /^PLUGIN=router\n/);
});

Deno.test("a FIFO at the log's path is never opened: the decision is made, with a warning", async () => {
  const plugins = await makeTree(PLUGINS);
  const { env, log } = await homes();
  await Deno.mkdir(join(log, ".."), { recursive: true, mode: 0o700 });
  const made = await new Deno.Command("mkfifo", { args: [log] }).output();
  assert.ok(made.success);
  const r = await cli([...PRE, "--plugins-dir", plugins], { env });
  assert.equal(r.code, 2, r.stderr);
  assert.match(
    r.stderr,
    /Cannot write the decision log: the decision log ".*" is not a regular file/,
  );
});

Deno.test("several processes appending at once leave every line whole", async () => {
  const dir = await tempDir({ prefix: "tyhooks-log-" });
  const log = join(dir, "tyhooks", "decisions.log");
  const writer = join(dir, "writer.ts");
  // Lines of up to 6 KB, more than a pipe's atomic 4 KB, from 6 processes at once; about 2.7 MB
  // in all, under the rotation bound.
  await Deno.writeTextFile(
    writer,
    `import { appendDecisionLine } from ${JSON.stringify(join(ROOT, "lib/log.ts"))};\n` +
      "const [path, who] = Deno.args;\n" +
      "for (let i = 0; i < 150; i++) {\n" +
      "  const reason = who.repeat(1 + (i * 37) % 6000);\n" +
      "  const problem = appendDecisionLine(path, JSON.stringify({ who, i, reason }) + '\\n');\n" +
      "  if (problem !== null) throw new Error(problem);\n" +
      "}\n",
  );
  const writers = "abcdef".split("").map((who) =>
    new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", writer, log, who],
      stdout: "null",
      stderr: "piped",
    }).output()
  );
  for (const out of await Promise.all(writers)) {
    assert.ok(out.success, new TextDecoder().decode(out.stderr));
  }
  const lines = (await Deno.readTextFile(log)).trimEnd().split("\n");
  assert.equal(lines.length, 6 * 150);
  const seen = new Map<string, number>();
  for (const line of lines) {
    const { who, i, reason } = JSON.parse(line);
    assert.equal(reason, who.repeat(1 + (i * 37) % 6000));
    seen.set(who, (seen.get(who) ?? 0) + 1);
  }
  assert.deepEqual([...seen.values()], [150, 150, 150, 150, 150, 150]);
});

Deno.test("appendDecisionLine rotates at the bound it is given, keeping one old file", async () => {
  const dir = await tempDir({ prefix: "tyhooks-log-" });
  const log = join(dir, "decisions.log");
  for (let i = 0; i < 25; i++) assert.equal(appendDecisionLine(log, `line ${i}\n`, 64), null);
  const names = [...Deno.readDirSync(dir)].map((e) => e.name).sort();
  assert.deepEqual(names, ["decisions.log", "decisions.log.1"]);
  assert.ok(Deno.statSync(`${log}.1`).size >= 64);
  assert.ok(Deno.statSync(log).size < 64);
  assert.match(await Deno.readTextFile(log), /line 24\n$/);
});

Deno.test("args are cut to 1 KiB of JSON text without serialising the rest of the value", () => {
  // Serialising past the first KiB would throw: JSON.stringify refuses a BigInt.
  const huge = { content: "y".repeat(8 * 1024 * 1024), rest: [1, 10n] };
  assert.throws(() => JSON.stringify(huge));
  const text = cut(jsonPrefix(huge, 1024));
  assert.ok(new TextEncoder().encode(text).length <= 1024);
  assert.ok(text.startsWith('{"content":"yyy'));
  assert.ok(text.endsWith("…"));
  // Cut by bytes, never inside a character.
  const wide = cut("é".repeat(1000));
  assert.ok(new TextEncoder().encode(wide).length <= 1024);
  assert.equal(wide, `${"é".repeat(510)}…`);
  assert.equal(cut("short"), "short");
  assert.equal(jsonPrefix({ a: [1, "b", null, true] }, 1024), '{"a":[1,"b",null,true]}');
});

Deno.test("a line read back is a record only when it is one", () => {
  const record: DecisionRecord = {
    ts: "2026-12-01T10:00:00.000Z",
    event: "pre_tool_call",
    agent: "",
    tool: "bash",
    args: "{}",
    task_id: null,
    decision: "allow",
    reason: "",
    plugin: "g",
    ms: 3.2,
    pid: 9,
  };
  assert.deepEqual(readDecisionLine(JSON.stringify(record)), record);
  assert.equal(readDecisionLine("not json"), null);
  assert.equal(readDecisionLine("[1,2]"), null);
  assert.equal(readDecisionLine('{"event":42}'), null);
});
