/**
 * The real coding-agent clients, driven through one prompt each against the scripted model server
 * with tyhooks wired in as their hooks: what runs, what the model is told, what the hooks hear.
 * Each row is one client run per client it names; a client that is not installed (`deno task
 * agent-clients`) has its tests skipped, saying why.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { MAIN, withTree } from "../_cli.ts";
import { readPid } from "../_procs.ts";
import {
  CLIENT_LABELS,
  type ClientName,
  type ClientRun,
  type ClientRunOptions,
  findClient,
  runClient,
  type RunDirs,
  shellTool,
  wireByHand,
  type Wiring,
} from "./_clients.ts";

/** A guard that blocks `rm -rf` and `touch blocked.txt`, and stalls on `touch slow.txt`. */
const GUARD = `#!/bin/sh
request=$(cat)
case "$request" in
  *'rm -rf'* | *'touch blocked.txt'*)
    echo '{"action":"block","reason":"GUARD-SAYS-NO: blocked.txt stays uncreated"}' ;;
  *'touch slow.txt'*)
    echo $$ > "$TASK_PLUGIN_DIR/../guard.pid"
    echo $PPID > "$TASK_PLUGIN_DIR/../tyhooks.pid"
    exec sleep 60 ;;
esac
`;

const PLUGINS = {
  "plugins/guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
  "plugins/guard/guard.sh": GUARD,
  "plugins/recorder/plugin.yaml": "name: recorder\nhooks:\n  post_tool_call: save.sh\n",
  "plugins/recorder/save.sh": `#!/bin/sh\n{ cat; echo; } >> "$TASK_PLUGIN_DIR/../post.jsonl"\n`,
};

/** Today's commands, written into each client's settings by hand. */
const TOOL_CLAUDE: Wiring = wireByHand({
  pre: ["tool", "pre", "--claude"],
  post: ["tool", "post", "--claude"],
});

/** One case: a command the model asks for, and what must come of it in each named client. */
interface Row {
  /** The test's name after the client's. */
  name: string;
  clients: ClientName[];
  shell: string;
  probe: string;
  wiring: Wiring;
  codexTrust?: ClientRunOptions["codexTrust"];
  before?: ClientRunOptions["before"];
  during?: ClientRunOptions["during"];
  expect: {
    ran: boolean;
    /** What the model must be told of the call. */
    told: RegExp;
    /** The command the post hooks must hear of. */
    post?: string;
  };
}

/** Kills tyhooks once its guard is deciding, then the guard's own sleep. */
async function killTyhooksMidDecision(dirs: RunDirs): Promise<void> {
  const tyhooks = await readPid(join(dirs.plugins, "tyhooks.pid"), 120_000);
  const guard = await readPid(join(dirs.plugins, "guard.pid"), 1_000);
  // Only the processes this test started: tyhooks from main.ts, and the guard's sleep.
  const cmdline = (pid: number) => Deno.readTextFileSync(`/proc/${pid}/cmdline`);
  assert.ok(cmdline(tyhooks).includes(MAIN), `pid ${tyhooks} is not tyhooks`);
  assert.ok(cmdline(guard).startsWith("sleep"), `pid ${guard} is not the guard's sleep`);
  Deno.kill(tyhooks, "SIGKILL");
  Deno.kill(guard, "SIGKILL");
}

const ROWS: Row[] = [
  {
    name: "does not run a command the guard blocks, and tells the model the guard's reason",
    clients: ["claude", "codex"],
    shell: "touch blocked.txt",
    probe: "blocked.txt",
    wiring: TOOL_CLAUDE,
    // Once here, the trust a person gives Codex's hooks; the other rows skip it with a flag.
    codexTrust: "app-server",
    expect: { ran: false, told: /GUARD-SAYS-NO: blocked\.txt stays uncreated/ },
  },
  {
    name: "runs a command the guard allows, and the post hooks hear of it though it failed",
    clients: ["claude", "codex"],
    shell: "touch ran.txt; echo COMMAND-OUTPUT; exit 3",
    probe: "ran.txt",
    wiring: TOOL_CLAUDE,
    expect: {
      ran: true,
      told: /COMMAND-OUTPUT/,
      post: "touch ran.txt; echo COMMAND-OUTPUT; exit 3",
    },
  },
  {
    name: "blocks when tyhooks was deleted after wiring",
    clients: ["claude", "gemini", "codex"],
    shell: "touch ran.txt",
    probe: "ran.txt",
    wiring: TOOL_CLAUDE,
    before: (dirs) => Deno.remove(dirs.tyhooks),
    expect: { ran: false, told: /tyhooks did not answer \(exit 127\): blocking/ },
  },
  {
    name: "blocks when tyhooks is killed mid-decision",
    clients: ["claude", "gemini", "codex"],
    shell: "touch slow.txt",
    probe: "slow.txt",
    wiring: TOOL_CLAUDE,
    during: killTyhooksMidDecision,
    expect: { ran: false, told: /tyhooks did not answer \(exit 137\): blocking/ },
  },
];

/** Registers the rows of `client`, skipped with the reason when it is not installed. */
function clientTests(client: ClientName, rows: Row[]): void {
  const found = findClient(client);
  for (const row of rows.filter((r) => r.clients.includes(client))) {
    Deno.test({
      name: "bin" in found
        ? `${CLIENT_LABELS[client]} ${row.name}`
        : `${CLIENT_LABELS[client]} ${row.name} (skipped: ${found.missing})`,
      ignore: !("bin" in found),
      fn: () =>
        withTree(PLUGINS, (dir) => checkRow(client, (found as { bin: string }).bin, row, dir)),
    });
  }
}

async function checkRow(client: ClientName, bin: string, row: Row, dir: string): Promise<void> {
  const plugins = join(dir, "plugins");
  const run: ClientRun = await runClient(client, bin, {
    plugins,
    shell: row.shell,
    probe: row.probe,
    wiring: row.wiring,
    codexTrust: row.codexTrust ?? "flag",
    before: row.before,
    during: row.during,
  });
  const summary = JSON.stringify({ ...run, stdout: run.stdout.slice(-2000) }, null, 1);
  assert.equal(run.code, 0, summary);
  assert.equal(run.timedOut, false, summary);
  assert.equal(run.ran, row.expect.ran, summary);
  assert.equal(run.told.length, 1, summary);
  assert.match(run.told[0], row.expect.told, summary);
  if (row.expect.post !== undefined) {
    const heard = (await Deno.readTextFile(join(plugins, "post.jsonl"))).split("\n").filter(Boolean)
      .map((line) => JSON.parse(line));
    assert.deepEqual(heard.map((r) => [r.hook, r.tool, r.args.command]), [
      ["post_tool_call", shellTool(client), row.expect.post],
    ]);
  }
}

for (const client of ["claude", "gemini", "codex"] as const) clientTests(client, ROWS);
