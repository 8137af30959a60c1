/**
 * `deno task demo`: tyhooks' main job on the bundled plugins-example/, the way a task daemon
 * drives it. Every step runs the real CLI (through tyhooks' own runner) and prints what it
 * decided. Logs and state go to a temp dir; nothing is left running.
 *
 * @module
 */

import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { runScript } from "../lib/process/run_script.ts";
import { spawnIsolated, terminateGroup } from "../lib/process/group.ts";

const HERE = dirname(fileURLToPath(import.meta.url));
const MAIN = join(HERE, "..", "main.ts");
const GRANTS = [
  "--allow-read",
  "--allow-write",
  "--allow-env",
  "--allow-run",
  "--allow-sys",
  "--allow-net",
];
const tmp = await Deno.makeTempDir({ prefix: "tyhooks-demo-" });
const bin = join(tmp, "bin");
await Deno.mkdir(bin);
// The placement plugin calls `tyhooks pick-host`, as it would on a real control host.
await Deno.writeTextFile(
  join(bin, "tyhooks"),
  `#!/bin/sh\nexec "${Deno.execPath()}" run --quiet ${GRANTS.join(" ")} "${MAIN}" "$@"\n`,
);
await Deno.chmod(join(bin, "tyhooks"), 0o755);

// tyhooks' own cache and spool go to the temp dir; Deno's cache stays where it is (it lives under
// $XDG_CACHE_HOME/deno by default, and a fresh one would fetch the npm packages again).
const denoInfo = await runScript(Deno.execPath(), { args: ["info", "--json"] });
const env = {
  DENO_DIR: Deno.env.get("DENO_DIR") ?? JSON.parse(denoInfo.stdout).denoDir,
  PATH: `${bin}:${Deno.env.get("PATH")}`,
  TY_PLUGINS_DIR: HERE,
  XDG_CACHE_HOME: join(tmp, "cache"),
  XDG_STATE_HOME: join(tmp, "state"),
  XDG_RUNTIME_DIR: tmp,
  NOTIFIER_LOG: join(tmp, "notifications.log"),
  AUDIT_LOG: join(tmp, "audit.jsonl"),
  QUOTA_FILE: join(tmp, "quota"),
  NO_COLOR: "1",
};
const TASK = JSON.stringify({
  id: 42,
  title: "Fix flaky login test",
  project: "work-web",
  executor: "claude",
});

async function tyhooks(...args: string[]) {
  const result = await runScript(join(bin, "tyhooks"), { args, env, timeoutMs: 20_000 });
  return { code: result.exit_code, out: result.stdout.trim(), err: result.stderr.trim() };
}

function step(title: string) {
  console.log(`\n== ${title}`);
}

function show(text: string) {
  for (const line of text.split("\n")) if (line !== "") console.log(`   ${line}`);
}

step("The plugins (tyhooks plugins list)");
show((await tyhooks("plugins", "list")).out);

step("A task goes through its life (status-change queued, processing, done)");
for (const status of ["queued", "processing", "done"]) {
  const { out } = await tyhooks(
    "status-change",
    status,
    "--task-json",
    TASK,
    "--message",
    "all tests pass",
    "--json",
  );
  const doc = JSON.parse(out);
  const ran = doc.runs.map((r: { plugin: string; exit_code: number }) =>
    `${r.plugin} (exit ${r.exit_code})`
  );
  console.log(
    `   ${status.padEnd(10)} -> ${doc.event || "no event"}: ${
      ran.join(", ") || "no hook handles it"
    }`,
  );
}
show(`notifications.log: ${(await Deno.readTextFile(env.NOTIFIER_LOG)).trim()}`);

step("Which profile should it run under? (tyhooks route)");
show((await tyhooks("route", "--task-json", TASK)).out);
await Deno.writeTextFile(env.QUOTA_FILE, "exhausted\n");
console.log("   ...and once the quota file says exhausted:");
show((await tyhooks("route", "--task-json", TASK)).out);

step("On which host? (tyhooks place -> fleet-placement -> tyhooks pick-host)");
show((await tyhooks("place", "--task-json", TASK)).out);

step("May the agent run these tool calls? (tyhooks tool pre)");
for (const command of ["ls -la", "rm -rf / --no-preserve-root"]) {
  const verdict = await tyhooks(
    "tool",
    "pre",
    "--tool",
    "bash",
    "--args",
    JSON.stringify({ command }),
  );
  console.log(`   ${command.padEnd(30)} -> exit ${verdict.code} ${verdict.out}`);
}
await tyhooks(
  "tool",
  "post",
  "--tool",
  "bash",
  "--args",
  '{"command":"ls -la"}',
  "--result",
  "3 files",
);
show(`audit.jsonl: ${(await Deno.readTextFile(env.AUDIT_LOG)).trim()}`);

step("A user-invoked action (tyhooks plugins run tracker-sync sync)");
const action = await tyhooks("plugins", "run", "tracker-sync", "sync", "--task-json", TASK);
show(`exit ${action.code}: ${action.out}`);

step("The daemon: one question over its unix socket (tyhooks serve)");
const socket = join(tmp, "tyhooks.sock");
const daemon = spawnIsolated(join(bin, "tyhooks"), {
  args: ["serve", "--listen", `unix:${socket}`],
  env,
});
const drained = Promise.all([daemon.stdout.cancel(), daemon.stderr.pipeTo(new WritableStream())]);
try {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  let answer: Response | undefined;
  for (let i = 0; i < 200 && answer === undefined; i++) {
    answer = await fetch("http://localhost/v1/route", {
      method: "POST",
      body: JSON.stringify({ task: JSON.parse(TASK) }),
      client,
    }).catch(() => new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 50)));
  }
  show(`POST /v1/route -> ${answer?.status} ${await answer?.text()}`);
  client.close();
} finally {
  await terminateGroup(daemon.pid, { graceMs: 3000, reaped: daemon.status });
  await daemon.status;
  await drained.catch(() => {});
}
show(`daemon stopped, socket removed: ${!(await Deno.stat(socket).catch(() => null))}`);

step("A supervised service for two seconds (tyhooks services run)");
const services = spawnIsolated(join(bin, "tyhooks"), { args: ["services", "run"], env });
const lines = new Response(services.stderr).text();
await services.stdout.cancel();
await new Promise((resolve) => setTimeout(resolve, 2000));
await terminateGroup(services.pid, { graceMs: 6000, reaped: services.status });
console.log(`   exit ${(await services.status).code}`);
show(
  (await lines).split("\n").filter((l) => l.includes("[heartbeat/beat]")).slice(0, 2).join("\n"),
);

await Deno.remove(tmp, { recursive: true });
console.log("\nDone: nothing left running, nothing written outside a temp dir.");
