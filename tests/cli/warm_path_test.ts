/**
 * What a warm consulted call (index cache valid) makes Deno evaluate: few of tyhooks' own
 * modules, and none of the costly ones. Read from Deno's own debug log, which names every ES
 * module it runs (a V8 code cache line each), so this counts what really loads.
 *
 * Measured on a busy 2-core machine (median CPU of 25 runs): `node:fs` added ~10 ms to every
 * start, `node:util` + `node:path` + `node:async_hooks` ~9 ms more; zod and yaml tens of ms.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, tempDir } from "../_cli.ts";
import { settled } from "../_index.ts";
import { agentPayload, waitForFile } from "../_procs.ts";

/** Modules that must never load on a warm call: each costs milliseconds of every start. */
const COSTLY = [
  // zod, yaml: only when something is odd; re2js: only for a matcher beyond RE2's common
  // subset. Deno's npm cache is where they load from here (file: URLs, which `own` below would
  // count too).
  /^npm:|node_modules|\/zod@|\/yaml@|\/registry\.npmjs\.org\//,
  /^ext:deno_node\/fs\.ts$/, // node:fs: ~68 Node modules (process, streams, net)
  /^ext:deno_node\/util\.ts$/, // node:util: ~40 (parseArgs; command_line.ts reads plain lines itself)
  /^ext:deno_node\/path\/mod\.ts$/, // node:path: lib/paths.ts instead
  /^ext:deno_node\/async_hooks\.ts$/, // only a cold load records what it read
];

/** Runs tyhooks with Deno's debug log; its stderr. */
async function debugLog(args: string[], env: Record<string, string>, stdin?: string) {
  const run = await cli(args, { env, stdin, debugLog: true });
  assert.equal(run.code, 0, run.stderr.slice(-2000));
  return run.stderr;
}

async function modulesLoaded(args: string[], env: Record<string, string>): Promise<string[]> {
  // Twice first: the index cache is written, then every module is in Deno's code cache, whose
  // "hit" line is what the third run logs for each module it evaluates.
  for (let i = 0; i < 2; i++) assert.equal((await cli(args, { env })).code, 0);
  const stderr = await debugLog(args, env);
  const loaded = [...stderr.matchAll(/code cache (?:hit )?for ES module: ([^,\s]+)/g)]
    .map((m) => m[1]);
  return [...new Set(loaded)];
}

/** Each call: its words, its plugins, and how many of tyhooks' own modules it loads at most. */
const CALLS: [string, string[], Record<string, string>, number][] = [
  ["route", ["route", "--task-json", '{"id":1}'], {
    "r/plugin.yaml": "name: r\nhooks:\n  task.route: route.sh\n",
    "r/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/profiles/a\n",
  }, 20],
  ["place", ["place", "--task-json", '{"id":1}'], {
    "p/plugin.yaml": "name: p\nhooks:\n  task.placement: place.sh\n",
    "p/place.sh": '#!/bin/sh\necho \'{"target":"h"}\'\n',
  }, 20],
  ["tool pre", ["tool", "pre", "--tool", "bash"], {
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n",
    "g/guard.sh": '#!/bin/sh\necho \'{"action":"allow"}\'\n',
  }, 21],
  // A matcher of plain names, as most are, runs on our own matcher (the settings' module and the
  // matcher's: two modules more), without loading the RE2 engine (npm:re2js)...
  ["tool pre matching names", ["tool", "pre", "--tool", "bash"], {
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n" +
      'tyhooks:\n  pre_tool_call: {tools: "^(bash|write_file)$"}\n',
    "g/guard.sh": '#!/bin/sh\necho \'{"action":"allow"}\'\n',
  }, 23],
  // ...and so does any in RE2's common subset (repeats, classes, anchors), however it nests.
  ["tool pre with a nested-repeat matcher", ["tool", "pre", "--tool", "B".repeat(40)], {
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n" +
      'tyhooks:\n  pre_tool_call: {tools: "^(B+)+$|^mcp__\\\\w+__(read|write)_[a-z]{2,8}$"}\n',
    "g/guard.sh": '#!/bin/sh\necho \'{"action":"allow"}\'\n',
  }, 23],
];

for (const [name, args, files, atMost] of CALLS) {
  Deno.test(`a warm ${name} loads at most ${atMost} own modules, and no zod, yaml, node:fs, node:util, node:path or node:async_hooks`, async () => {
    const dir = await makeTree(files);
    await settled();
    const home = await tempDir();
    const env = { HOME: home, XDG_CACHE_HOME: join(home, "cache") };
    const loaded = await modulesLoaded([...args, "--plugins-dir", dir], env);
    const own = loaded.filter((s) => s.startsWith("file:"));
    // Control: the log names the modules we know run, so an empty list cannot pass.
    assert.ok(own.some((s) => s.endsWith("/main.ts")), loaded.join("\n"));
    assert.ok(own.some((s) => s.endsWith("/lib/consult/consult.ts")), own.join("\n"));
    assert.ok(loaded.some((s) => s.startsWith("ext:deno_process/")), loaded.join("\n"));
    assert.deepEqual(loaded.filter((s) => COSTLY.some((re) => re.test(s))), []);
    assert.ok(own.length <= atMost, `${own.length} modules:\n${own.join("\n")}`);
  });
}

// Deno keys its code cache on the V8 flags: a background run started with others would compile
// every module afresh and replace the cache, and the agent's next call would compile them again.
Deno.test("a notified agent event's background run leaves the next call's code cache as it was", async () => {
  const dir = await makeTree({
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n  post_tool_call: post.sh\n",
    "g/guard.sh": '#!/bin/sh\necho \'{"action":"allow"}\'\n',
    "g/post.sh": "#!/bin/sh\ncat >/dev/null\n",
  });
  const home = await tempDir();
  const env = {
    HOME: home,
    XDG_CACHE_HOME: join(home, "cache"),
    XDG_STATE_HOME: join(home, "state"),
    TYHOOKS_DAEMON: "off",
  };
  const args = ["agent", "claude", "--plugins-dir", dir];
  const pre = agentPayload("claude", "PreToolUse");
  for (let i = 0; i < 2; i++) assert.equal((await cli(args, { env, stdin: pre })).code, 0);
  const post = await cli(args, { env, stdin: agentPayload("claude", "PostToolUse") });
  assert.equal(post.code, 0, post.stderr);
  await waitForFile(join(home, "cache", "tyhooks", "detached.log"), {
    ms: 30_000,
    ready: (text) => text.includes("Ran 1 spooled event"),
  });
  const log = await debugLog(args, env, pre);
  assert.match(log, /code cache hit for ES module: file:.*\/main\.ts/);
  const compiled = [...log.matchAll(/Updating V8 code cache for ES module: (file:[^,\s]+)/g)];
  assert.deepEqual(compiled.map((m) => m[1]), []);
});
