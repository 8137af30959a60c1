import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, spawnCli, tempDir } from "../_cli.ts";
import { escapeJsonControl } from "../../lib/text.ts";

// SPEC "Decision log": tyhooks log [--follow] [--event E] [--decision D] [--since T] [-n N] [--json].

const MINUTE = 60_000;

/** A line as tyhooks writes it (DEL and C1 escaped too). */
function line(minutesAgo: number, fields: Record<string, unknown>): string {
  return escapeJsonControl(JSON.stringify({
    ts: new Date(Date.now() - minutesAgo * MINUTE).toISOString(),
    event: "pre_tool_call",
    agent: "",
    tool: "",
    args: "",
    task_id: null,
    decision: "allow",
    reason: "",
    plugin: "",
    ms: 1.5,
    pid: 4242,
    ...fields,
  }));
}

const ROUTED = line(180, {
  event: "task.route",
  task_id: 1,
  decision: "/profiles/a",
  plugin: "router",
  reason: "quota",
});
const BLOCKED = line(120, {
  tool: "bash",
  args: '{"command":"rm -rf /"}',
  decision: "block",
  plugin: "guard",
  reason: "no \u001b[31mrm\u009b here",
});
const ALLOWED = line(30, { tool: "read_file", plugin: "guard,audit" });
const PLACED = line(1, {
  event: "task.placement",
  task_id: 7,
  decision: "gpu-2",
  plugin: "placer",
  reason: "free",
});

/** A state dir whose log holds `lines`, and the env that points tyhooks at it. */
async function logWith(lines: string[]): Promise<{ env: Record<string, string>; log: string }> {
  const home = await tempDir({ prefix: "tyhooks-home-" });
  const log = join(home, "state", "tyhooks", "decisions.log");
  await Deno.mkdir(join(log, ".."), { recursive: true, mode: 0o700 });
  if (lines.length > 0) {
    await Deno.writeTextFile(log, lines.map((l) => l + "\n").join(""), { mode: 0o600 });
  }
  return { env: { HOME: home, XDG_STATE_HOME: join(home, "state") }, log };
}

const ALL = [ROUTED, BLOCKED, ALLOWED, PLACED];

Deno.test("tyhooks log prints a header and one aligned line per decision, oldest first", async () => {
  const { env } = await logWith(ALL);
  const r = await cli(["log"], { env });
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 5, r.stdout);
  assert.match(lines[0], /^TIME +EVENT +DECISION +BY +TOOL\/TASK +REASON$/);
  assert.match(lines[1], /task\.route +\/profiles\/a +router +task 1 +quota$/);
  assert.match(lines[2], /pre_tool_call +block +guard +bash +no /);
  assert.match(lines[3], /pre_tool_call +allow +guard,audit +read_file$/);
  assert.match(lines[4], /task\.placement +gpu-2 +placer +task 7 +free$/);
  for (const column of ["EVENT", "DECISION", "BY", "TOOL/TASK"]) {
    const at = lines[0].indexOf(column);
    for (const l of lines.slice(1)) assert.notEqual(l[at - 1], undefined, l);
    for (const l of lines.slice(1)) assert.match(l.slice(at - 2, at), /^ {2}$/, `${column}: ${l}`);
  }
});

Deno.test("tyhooks log shows control characters in a reason escaped, never raw", async () => {
  // Stored raw too: JSON allows a raw C1 character in a string.
  const raw = BLOCKED.replace("\\u009b", "\u009b");
  assert.notEqual(raw, BLOCKED);
  const { env } = await logWith([ROUTED, raw]);
  const text = await cli(["log"], { env });
  assert.ok(text.stdout.includes("no \\x1b[31mrm\\x9b here"), text.stdout);
  // deno-lint-ignore no-control-regex -- looking for control characters is the point
  assert.doesNotMatch(text.stdout, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
  const json = await cli(["log", "--json", "--decision", "block"], { env });
  // deno-lint-ignore no-control-regex -- looking for control characters is the point
  assert.doesNotMatch(json.stdout, /[\x00-\x09\x0b-\x1f\x7f-\x9f]/);
  assert.equal(JSON.parse(json.stdout).reason, "no \u001b[31mrm\u009b here");
});

Deno.test("tyhooks log --json prints the stored lines that pass the filters", async () => {
  const { env } = await logWith([ROUTED, ALLOWED, PLACED]);
  const r = await cli(["log", "--json"], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, [ROUTED, ALLOWED, PLACED].map((l) => l + "\n").join(""));
});

Deno.test("tyhooks log filters by --event, --decision, --since and -n", async () => {
  const { env } = await logWith(ALL);
  const shown = async (...args: string[]) => {
    const r = await cli(["log", "--json", ...args], { env });
    assert.equal(r.code, 0, r.stderr);
    return r.stdout.trimEnd().split("\n").filter((l) => l !== "");
  };
  assert.deepEqual(await shown("--event", "pre_tool_call"), [BLOCKED, ALLOWED]);
  assert.deepEqual(await shown("--decision", "block"), [BLOCKED]);
  assert.deepEqual(await shown("--since", "1h"), [ALLOWED, PLACED]);
  assert.deepEqual(await shown("--since", "90m"), [ALLOWED, PLACED]);
  assert.deepEqual(await shown("-n", "1"), [PLACED]);
  assert.deepEqual(await shown("-n", "2", "--event", "pre_tool_call"), [BLOCKED, ALLOWED]);
  assert.deepEqual(await shown("--since", new Date(Date.now() - 150 * MINUTE).toISOString()), [
    BLOCKED,
    ALLOWED,
    PLACED,
  ]);
  const bad = await cli(["log", "--since", "yesterday"], { env });
  assert.equal(bad.code, 64);
  assert.match(bad.stderr, /Invalid value "yesterday" for flag "--since"/);
});

Deno.test("tyhooks log reads the rotated file first, then the current one", async () => {
  const { env, log } = await logWith([ALLOWED, PLACED]);
  await Deno.writeTextFile(`${log}.1`, `${ROUTED}\n${BLOCKED}\n`, { mode: 0o600 });
  const r = await cli(["log", "--json"], { env });
  assert.equal(r.stdout, ALL.map((l) => l + "\n").join(""));
});

Deno.test("tyhooks log skips lines that are not decisions and says how many", async () => {
  const huge = JSON.stringify({ event: "x", reason: "z".repeat(200_000) });
  const { env } = await logWith([ROUTED, "not json", huge, '{"event":42}', PLACED]);
  const r = await cli(["log", "--json"], { env });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stdout, `${ROUTED}\n${PLACED}\n`);
  assert.match(r.stderr, /warn: Skipped 3 line\(s\) of the decision log that are not decisions/);
});

Deno.test("tyhooks log says there are no decisions when there is no log, and exits 0", async () => {
  const { env } = await logWith([]);
  const r = await cli(["log"], { env });
  assert.equal(r.code, 0);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, /info: No decisions \(log=.*decisions\.log\)/);
});

Deno.test("tyhooks log refuses a log that is not a regular file, naming it", async () => {
  const { env, log } = await logWith([]);
  await Deno.mkdir(log);
  const r = await cli(["log"], { env });
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /Cannot read the decision log ".*decisions\.log": it is not a regular file/,
  );
});

/** The child's stdout as it comes, and a wait for a condition on it. */
function collect(child: Deno.ChildProcess): { text(): string; until(s: string): Promise<void> } {
  let text = "";
  const decoder = new TextDecoder();
  const reading = (async () => {
    for await (const chunk of child.stdout) text += decoder.decode(chunk, { stream: true });
  })();
  return {
    text: () => text,
    async until(wanted: string) {
      const deadline = Date.now() + 20_000;
      while (!text.includes(wanted)) {
        if (Date.now() > deadline) throw new Error(`never printed ${wanted}; got:\n${text}`);
        await Promise.race([reading, new Promise((r) => setTimeout(r, 50))]);
      }
    },
  };
}

/**
 * The tools of the pre_tool_call lines `log --follow --json` printed while `steps` changed the log
 * (`until` waits for a text to be printed), stopped by SIGINT, which it must exit 0 on.
 */
async function followed(
  lines: string[],
  steps: (log: string, until: (wanted: string) => Promise<void>) => Promise<void>,
): Promise<string[]> {
  const { env, log } = await logWith(lines);
  const child = spawnCli(["log", "--follow", "--json", "--event", "pre_tool_call"], { env });
  const out = collect(child);
  try {
    await steps(log, out.until);
  } finally {
    child.kill("SIGINT");
  }
  const status = await child.status;
  await child.stderr.cancel();
  assert.equal(status.code, 0);
  return out.text().trimEnd().split("\n").map((l) => JSON.parse(l).tool);
}

Deno.test("tyhooks log --follow prints lines appended later, across a rotation, until SIGINT (exit 0)", async () => {
  const tools = await followed([ROUTED], async (log, until) => {
    // The log's first line does not pass the filter; a line appended after the start does.
    const first = line(0, { tool: "first" });
    await Deno.writeTextFile(log, `${PLACED}\n${first}\n`, { append: true });
    await until('"tool":"first"');
    // Rotated: a line written to the old file just before, then the new file's lines.
    await Deno.rename(log, `${log}.1`);
    await Deno.writeTextFile(`${log}.1`, `${line(0, { tool: "late" })}\n`, { append: true });
    await Deno.writeTextFile(log, `${line(0, { tool: "after" })}\n`, { mode: 0o600 });
    await until('"tool":"after"');
    // Half a line waits for the rest.
    await Deno.writeTextFile(log, line(0, { tool: "split" }).slice(0, 30), { append: true });
    await Deno.writeTextFile(log, line(0, { tool: "split" }).slice(30) + "\n", { append: true });
    await until('"tool":"split"');
  });
  assert.deepEqual(tools, ["first", "late", "after", "split"]);
});

Deno.test("tyhooks log --follow reads a log truncated in place from its start again, as tail -F does", async () => {
  const tools = await followed([ROUTED, BLOCKED, ALLOWED], async (log, until) => {
    await Deno.writeTextFile(log, `${line(0, { tool: "before" })}\n`, { append: true });
    await until('"tool":"before"');
    // Emptied (`: > decisions.log`), then a line appended: shorter than what was read before.
    await Deno.truncate(log, 0);
    await Deno.writeTextFile(log, `${line(0, { tool: "after" })}\n`, { append: true });
    await until('"tool":"after"');
  });
  assert.deepEqual(tools, ["bash", "read_file", "before", "after"]);
});
