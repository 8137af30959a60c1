/**
 * The agent fast path: `tyhooks agent claude` end to end, with and without a daemon, against
 * `deno run` of an empty file with the same flags, all interleaved in one run
 * (`deno run -A tests/bench/agent.ts [ROUNDS]`, default 30). Medians, and the ratio to the empty
 * run. Issue targets: PreToolUse in-process <= 2.0x, through the daemon (persistent guard)
 * <= 1.3x, PostToolUse <= 1.3x.
 *
 * (a) PreToolUse, no daemon: the guard decides in-process (`TYHOOKS_DAEMON=off`).
 * (b) PreToolUse, `serve` running on the same plugins, the guard `persistent: true`.
 * (c) PostToolUse through the daemon (spooled, 202).
 * (d) PostToolUse without it (handed to a detached run).
 *
 * A post event leaves work behind (the daemon's hook run, or the detached run's whole Deno start):
 * each call waits until the spools are empty again, then `SETTLE_MS` more, else on 2 cores that
 * work is timed as part of whichever case follows it, however slow the machine is that day.
 */

import { join } from "node:path";
import { MAIN, PERMISSION_FLAGS, START_FLAGS, V8_FLAGS } from "../_cli.ts";
import { median, ms, pairedInterval, pairedRatio, ratio } from "./_stats.ts";
import { agentPayload } from "../_procs.ts";
import { ALLOWING_GUARD } from "./_tree.ts";

const rounds = Number(Deno.args[0] ?? 30);
const FLAGS = ["run", "--quiet", ...PERMISSION_FLAGS, ...START_FLAGS, ...V8_FLAGS];
const encoder = new TextEncoder();
/** After the last leftover work ended: the machine is quiet again. */
const SETTLE_MS = 400;

const PRE = agentPayload("claude", "PreToolUse");
const POST = agentPayload("claude", "PostToolUse");

const dir = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
const plugins = join(dir, "plugins");
await Deno.mkdir(join(plugins, "g"), { recursive: true });
await Deno.writeTextFile(
  join(plugins, "g", "plugin.yaml"),
  "name: g\nhooks:\n  pre_tool_call: guard.sh\n  post_tool_call: post.sh\n" +
    "tyhooks:\n  pre_tool_call: {persistent: true}\n",
);
await Deno.writeTextFile(join(plugins, "g", "guard.sh"), ALLOWING_GUARD, { mode: 0o755 });
await Deno.writeTextFile(join(plugins, "g", "post.sh"), "#!/bin/sh\ncat >/dev/null\n", {
  mode: 0o755,
});
const empty = join(dir, "empty.ts");
await Deno.writeTextFile(empty, "");
const run = join(dir, "run");
await Deno.mkdir(run, { mode: 0o700 });
const socket = join(run, "tyhooks.sock");
const env = {
  NO_COLOR: "1",
  HOME: dir,
  XDG_CACHE_HOME: join(dir, "cache"),
  XDG_STATE_HOME: join(dir, "state"),
  TY_PLUGINS_DIR: plugins,
};
// The detached runs spool apart from the daemon, whose spool keeps its own run dir: each spool is
// done once it holds no entry (the daemon's) and no run dir (a detached run's).
const detachedState = join(dir, "state-detached");
const SPOOLS = [
  join(env.XDG_STATE_HOME, "tyhooks", "spool"),
  join(detachedState, "tyhooks", "spool"),
];

const daemon = new Deno.Command(Deno.execPath(), {
  args: [...FLAGS, MAIN, "serve", "--listen", `unix:${socket}`],
  env,
  stdout: "null",
  stderr: "null",
}).spawn();

async function once(args: string[], extra: Record<string, string>, input?: string) {
  const started = performance.now();
  const child = new Deno.Command(Deno.execPath(), {
    args,
    env: { ...env, ...extra },
    stdin: "piped",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  if (input !== undefined) await writer.write(encoder.encode(input));
  await writer.close();
  const out = await child.output();
  const took = performance.now() - started;
  if (out.code !== 0) throw new Error(`${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
  return took;
}

/** Whether a spool still holds work: an entry, or the run dir of a detached run. */
async function holdsWork(spool: string, { daemon }: { daemon: boolean }): Promise<boolean> {
  try {
    for await (const entry of Deno.readDir(spool)) {
      if (entry.name.endsWith(".json") || (entry.isDirectory && !daemon)) return true;
      if (entry.isDirectory && (await holdsWork(join(spool, entry.name), { daemon }))) return true;
    }
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) throw error;
  }
  return false;
}

async function settle() {
  for (let i = 0; i < 2000; i++) {
    const busy = (await holdsWork(SPOOLS[0], { daemon: true })) ||
      (await holdsWork(SPOOLS[1], { daemon: false }));
    if (!busy) break;
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
}

const agent = [...FLAGS, MAIN, "agent", "claude"];
const detached = { TYHOOKS_DAEMON: "off", XDG_STATE_HOME: detachedState };
const CASES: [string, () => Promise<number>][] = [
  ["empty deno run", () => once([...FLAGS, empty], {})],
  ["(a) PreToolUse, in-process", () => once(agent, { TYHOOKS_DAEMON: "off" }, PRE)],
  ["(b) PreToolUse, daemon", () => once(agent, { TYHOOKS_DAEMON: socket }, PRE)],
  ["(c) PostToolUse, daemon", () => once(agent, { TYHOOKS_DAEMON: socket }, POST)],
  ["(d) PostToolUse, no daemon", () => once(agent, detached, POST)],
];

try {
  for (let i = 0; i < 200 && !(await Deno.lstat(socket).then(() => true, () => false)); i++) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const times = new Map<string, number[]>();
  for (let round = -2; round < rounds; round++) {
    // Alternate the order; the first two rounds only warm the caches.
    const order = round % 2 ? [...CASES].reverse() : CASES;
    for (const [name, call] of order) {
      await settle();
      const took = await call();
      if (round >= 0) times.set(name, [...times.get(name) ?? [], took]);
    }
  }
  const empties = times.get("empty deno run")!;
  const base = median(empties);
  console.log(
    `${rounds} rounds; medians, their ratio, and the median of each round's ratio with its 95% interval`,
  );
  for (const [name, values] of times) {
    const paired = pairedRatio(values, empties).toFixed(2);
    const [low, high] = pairedInterval(values, empties).map((r) => r.toFixed(2));
    console.log(
      `${name.padEnd(30)} ${ms(median(values)).padStart(10)}  ${
        ratio(median(values), base)
      }  paired ${paired}x (${low}-${high})`,
    );
  }
} finally {
  daemon.kill("SIGTERM");
  await daemon.status;
  await Deno.remove(dir, { recursive: true });
}
