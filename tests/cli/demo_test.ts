/**
 * The demo is the project's main job on its embedded default (plugins-example/): it must run,
 * show every example plugin deciding, and leave nothing behind.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, PERMISSION_FLAGS, ROOT } from "../_cli.ts";

const EXAMPLES = join(ROOT, "plugins-example");

/**
 * Running processes whose command line mentions `text`. Zombies do not count: they are dead, and
 * the killed service's grandchildren are reparented to PID 1, which here reaps them only a second
 * or two later (or never).
 */
function processesMentioning(text: string): string[] {
  const out = new Deno.Command("ps", { args: ["-eo", "pid,stat,args"], stdout: "piped" })
    .outputSync();
  return new TextDecoder().decode(out.stdout).split("\n").filter((l) =>
    l.includes(text) && !l.includes(" ps ") && !/^\s*\d+\s+Z/.test(l)
  );
}

Deno.test("deno task demo shows every example plugin deciding and leaves no process behind", async () => {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["run", "--quiet", ...PERMISSION_FLAGS, join(EXAMPLES, "demo.ts")],
    env: { NO_COLOR: "1" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stdout = new TextDecoder().decode(out.stdout);
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  for (
    const plugin of [
      "notifier",
      "quota-router",
      "fleet-placement",
      "tool-guard",
      "tracker-sync",
      "heartbeat",
    ]
  ) {
    assert.ok(stdout.includes(plugin), `the demo shows ${plugin}`);
  }
  assert.match(stdout, /done\s+-> task\.done: notifier \(exit 0\)/);
  assert.match(stdout, /HOLD=1\n\s+REASON=quota exhausted/);
  assert.match(stdout, /"target":"gpu-2"/);
  assert.match(
    stdout,
    /rm -rf .*-> exit 2 \{"action":"block","reason":"destructive shell command: /,
  );
  assert.match(stdout, /audit\.jsonl: \{"hook":"post_tool_call","tool":"bash"/);
  assert.match(stdout, /POST \/v1\/route -> 200 .*"hold":true/);
  assert.match(stdout, /\[heartbeat\/beat\] alive at/);
  assert.deepEqual(processesMentioning("tyhooks-demo-"), []);
  assert.deepEqual(processesMentioning("beat.sh"), []);
});

Deno.test("plugins-example/ validates clean", async () => {
  const r = await cli(["plugins", "validate", "--plugins-dir", EXAMPLES]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
});
