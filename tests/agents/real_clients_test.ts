/**
 * The real coding-agent clients, driven through one prompt each against the scripted model server
 * with tyhooks wired in by `tyhooks agent install CLIENT --project DIR`: what runs, what the model
 * is told, what the hooks hear. One test per client, its rows run a few at a time as steps; a
 * client that is not installed (`deno task agent-clients`) has its test skipped, saying why.
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
} from "./_clients.ts";

/**
 * A guard that blocks `touch blocked.txt`, asks for `touch asked.txt`, rewrites `touch a.txt` to
 * `touch b.txt` (the model's other arguments kept as they were) and stalls on `touch slow.txt`.
 */
const GUARD = `#!/bin/sh
request=$(cat)
case "$request" in
  *'touch blocked.txt'*)
    echo '{"action":"block","reason":"GUARD-SAYS-NO: blocked.txt stays uncreated"}' ;;
  *'touch asked.txt'*)
    echo '{"action":"ask","reason":"GUARD-ASKS: may asked.txt be created?"}' ;;
  *'touch a.txt'*)
    args=$(printf '%s' "$request" | sed -n 's/.*"args":\\({[^}]*}\\).*/\\1/p' |
      sed 's/touch a\\.txt/touch b.txt/')
    echo "{\\"action\\":\\"allow\\",\\"args\\":$args}" ;;
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

/** A prompt guard that blocks every prompt. */
const PROMPT_GUARD = {
  "plugins/prompts/plugin.yaml": "name: prompts\nhooks:\n  agent.prompt: prompt.sh\n",
  "plugins/prompts/prompt.sh":
    `#!/bin/sh\ncat > /dev/null\necho '{"action":"block","reason":"PROMPT-GUARD: no prompts today"}'\n`,
};

/** A stop guard that sends the agent back to work once. */
const STOP_GUARD = {
  "plugins/stops/plugin.yaml": "name: stops\nhooks:\n  agent.stop: stop.sh\n",
  "plugins/stops/stop.sh": `#!/bin/sh
cat > /dev/null
flag="$TASK_PLUGIN_DIR/../stopped-once"
[ -e "$flag" ] && exit 0
touch "$flag"
echo '{"action":"block","reason":"STOP-GUARD: check the tests first"}'
`,
};

/** What must come of a row in a client. */
interface Expect {
  /** Files the project must hold afterwards (true) or must not (false). */
  files?: Record<string, boolean>;
  /** What the model must be told of its one tool call. */
  told?: RegExp;
  /** The number of model requests, when it is the point (a blocked prompt: none). */
  requests?: number;
  /** Text that must be somewhere in the model requests (not a tool result). */
  mentioned?: RegExp;
  /** Text that must be in the client's output. */
  stdout?: RegExp;
  /** What the post hooks must hear of the call: its command, and its result or error. */
  post?: { command: string; result?: RegExp; error?: RegExp };
}

/** One case: a command the model asks for, and what must come of it in each client. */
interface Row {
  /** The step's name. */
  name: string;
  shell?: string;
  /** Plugins beside the guard and the recorder. */
  plugins?: Record<string, string>;
  codexTrust?: ClientRunOptions["codexTrust"];
  during?: ClientRunOptions["during"];
  onTurn?: ClientRunOptions["onTurn"];
  expect: Expect;
  /** Where a client's contract makes it differ. */
  byClient?: Partial<Record<ClientName, Expect>>;
}

/** Kills tyhooks once its guard is deciding, then the guard's own sleep. */
async function killTyhooksMidDecision(dirs: RunDirs): Promise<void> {
  const tyhooks = await readPid(join(dirs.plugins, "tyhooks.pid"), 120_000);
  const guard = await readPid(join(dirs.plugins, "guard.pid"), 1_000);
  // Only the processes this test started: tyhooks from main.ts, and the guard's sleep.
  const cmdline = (pid: number) => Deno.readTextFileSync(`/proc/${pid}/cmdline`);
  assert.ok(cmdline(tyhooks).includes(MAIN), `pid ${tyhooks} is not tyhooks`);
  // The guard writes its pid files, then execs sleep: it may be a moment from it.
  for (let waited = 0; !cmdline(guard).startsWith("sleep") && waited < 2_000; waited += 20) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  assert.ok(cmdline(guard).startsWith("sleep"), `pid ${guard} is not the guard's sleep`);
  Deno.kill(tyhooks, "SIGKILL");
  Deno.kill(guard, "SIGKILL");
}

/**
 * Deletes tyhooks (the path `agent install` wrote) just before the model asks for the command,
 * and puts it back once the call's result is in: the prompt before and the stop after pass.
 */
async function deleteTyhooksForTheCall(turn: number, dirs: RunDirs): Promise<void> {
  const away = `${dirs.tyhooks}.away`;
  const move = (from: string, to: string) =>
    Deno.rename(from, to).catch((error) => {
      if (!(error instanceof Deno.errors.NotFound)) throw error;
    });
  if (turn === 0) await move(dirs.tyhooks, away);
  else await move(away, dirs.tyhooks);
}

const GUARD_NO = /GUARD-SAYS-NO: blocked\.txt stays uncreated/;
const NEEDS_APPROVAL = /needs approval: GUARD-ASKS: may asked\.txt be created\?/;

const ROWS: Row[] = [
  {
    name: "does not run a command the guard blocks, and tells the model the guard's reason",
    shell: "touch blocked.txt",
    // Once here, the trust a person gives Codex's hooks; the other rows skip it with a flag.
    codexTrust: "app-server",
    expect: { files: { "blocked.txt": false }, told: GUARD_NO },
  },
  {
    name: "runs a command the guard allows",
    shell: "touch ran.txt; echo COMMAND-OUTPUT",
    expect: { files: { "ran.txt": true }, told: /COMMAND-OUTPUT/ },
  },
  {
    name: "tells the post hooks of a failed command, with what it printed",
    shell: "echo COMMAND-OUTPUT; exit 3",
    expect: { told: /COMMAND-OUTPUT/ },
    byClient: {
      // PostToolUseFailure: the failure in "error".
      claude: {
        post: { command: "echo COMMAND-OUTPUT; exit 3", error: /Exit code 3[^]*COMMAND-OUTPUT/ },
      },
      // AfterTool: the exit code in the tool's output.
      gemini: {
        post: { command: "echo COMMAND-OUTPUT; exit 3", result: /COMMAND-OUTPUT[^]*Exit Code: 3/ },
      },
      // PostToolUse: the output alone, no exit code.
      codex: { post: { command: "echo COMMAND-OUTPUT; exit 3", result: /COMMAND-OUTPUT/ } },
    },
  },
  {
    name: "does not run the command when tyhooks was deleted after install",
    shell: "touch ran.txt",
    onTurn: deleteTyhooksForTheCall,
    expect: { files: { "ran.txt": false }, told: /tyhooks did not answer \(exit 127\): blocking/ },
  },
  {
    name: "does not run the command when tyhooks is killed mid-decision",
    shell: "touch slow.txt",
    during: killTyhooksMidDecision,
    expect: { files: { "slow.txt": false }, told: /tyhooks did not answer \(exit 137\): blocking/ },
  },
  {
    name: "does what the agent defines for a guard's ask",
    shell: "touch asked.txt",
    expect: { files: { "asked.txt": false }, told: NEEDS_APPROVAL },
    byClient: {
      // -p cannot ask anyone: the call is not run and the model gets the bare reason.
      claude: {
        files: { "asked.txt": false },
        told: /^GUARD-ASKS: may asked\.txt be created\?$/,
      },
    },
  },
  {
    name: "runs the command the guard rewrote it to",
    shell: "touch a.txt",
    expect: { files: { "a.txt": false, "b.txt": true } },
  },
  {
    name: "makes no model request for a prompt the guard blocks",
    plugins: PROMPT_GUARD,
    expect: { requests: 0 },
    byClient: { claude: { requests: 0, stdout: /PROMPT-GUARD: no prompts today/ } },
  },
  {
    name: "goes on working when the stop guard blocks, and the model is told why",
    plugins: STOP_GUARD,
    expect: { mentioned: /STOP-GUARD: check the tests first/ },
  },
];

/** How many client runs of one test go at once. */
const AT_ONCE = 3;

/** Registers the client's test, its rows as steps; skipped with the reason when not installed. */
function clientTest(client: ClientName): void {
  const found = findClient(client);
  const label = CLIENT_LABELS[client];
  Deno.test({
    name: "bin" in found ? label : `${label} (skipped: ${found.missing})`,
    ignore: !("bin" in found),
    // The steps run side by side: each one's ops outlive the others'.
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async (t) => {
      const bin = (found as { bin: string }).bin;
      const queue = [...ROWS];
      const worker = async () => {
        for (let row = queue.shift(); row !== undefined; row = queue.shift()) {
          const current = row;
          await t.step({
            name: `${label} ${current.name}`,
            sanitizeOps: false,
            sanitizeResources: false,
            sanitizeExit: false,
            fn: () =>
              withTree(
                { ...PLUGINS, ...current.plugins },
                (dir) => checkRow(client, bin, current, dir),
              ),
          });
        }
      };
      await Promise.all(Array.from({ length: AT_ONCE }, worker));
    },
  });
}

async function checkRow(client: ClientName, bin: string, row: Row, dir: string): Promise<void> {
  const plugins = join(dir, "plugins");
  const expect = row.byClient?.[client] ?? row.expect;
  const heard = join(plugins, "post.jsonl");
  const run: ClientRun = await runClient(client, bin, {
    plugins,
    shell: row.shell,
    codexTrust: row.codexTrust ?? "flag",
    during: row.during,
    onTurn: row.onTurn,
    // Post hooks run in the background: their record comes a little after the client's end.
    after: expect.post ? () => fileWithContent(heard, 60_000) : undefined,
  });
  const summary = JSON.stringify(
    { ...run, requests: run.requests.length, stdout: run.stdout.slice(-2000) },
    null,
    1,
  );
  assert.equal(run.timedOut, false, summary);
  assert.equal(run.code, 0, summary);
  for (const [file, present] of Object.entries(expect.files ?? {})) {
    assert.equal(
      run.files.includes(file),
      present,
      `${file} ${present ? "missing" : "created"}\n${summary}`,
    );
  }
  if (expect.told) {
    assert.equal(run.told.length, 1, summary);
    assert.match(run.told[0], expect.told, summary);
  }
  if (expect.requests !== undefined) assert.equal(run.requests.length, expect.requests, summary);
  if (expect.mentioned) assert.match(JSON.stringify(run.requests), expect.mentioned, summary);
  if (expect.stdout) assert.match(run.stdout, expect.stdout, summary);
  if (expect.post) {
    const records = (await Deno.readTextFile(heard)).split("\n").filter(Boolean)
      .map((line) => JSON.parse(line));
    assert.deepEqual(records.map((r) => [r.hook, r.tool, r.args.command]), [
      ["post_tool_call", shellTool(client), expect.post.command],
    ], JSON.stringify(records));
    if (expect.post.error) {
      assert.match(records[0].error ?? "", expect.post.error, JSON.stringify(records));
    }
    if (expect.post.result) {
      assert.match(records[0].result ?? "", expect.post.result, JSON.stringify(records));
    }
  }
}

/** Waits, up to `ms`, until `path` holds something. */
async function fileWithContent(path: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (text.trim() !== "") return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

for (const client of ["claude", "gemini", "codex"] as const) clientTest(client);
