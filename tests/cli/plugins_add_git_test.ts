import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, shScript, spawnCli } from "../_cli.ts";
import { alive, readPid, waitGone } from "../_procs.ts";

// A stand-in `git` first on PATH: it records how tyhooks called it, then does what the test says.
async function fakeGit(body: string): Promise<{ bin: string; log: string }> {
  const bin = await makeTree({});
  const log = join(bin, "calls.log");
  await Deno.writeTextFile(
    join(bin, "git"),
    shScript(
      `{ printf 'argv:'; for a in "$@"; do printf ' [%s]' "$a"; done; echo;`,
      '  echo "env: $GIT_TERMINAL_PROMPT $GIT_ALLOW_PROTOCOL $GIT_SSH_COMMAND";',
      `  echo "pgid-is-pid: $(ps -o pgid= -p $$ | tr -d ' ') $$"; } >> "${log}"`,
      body,
    ),
    { mode: 0o755 },
  );
  return { bin, log };
}

Deno.test("plugins add runs git shallow, with SOURCE after --, no prompts, only https/ssh/file", async () => {
  const { bin, log } = await fakeGit("exit 128");
  const root = await makeTree({});
  const result = await cli(
    ["plugins", "add", "https://example.invalid/me/ty-notify.git", "--plugins-dir", root],
    { env: { PATH: `${bin}:${Deno.env.get("PATH")}` } },
  );
  assert.equal(result.code, 1);
  const calls = (await Deno.readTextFile(log)).split("\n");
  assert.match(
    calls[0],
    /^argv: \[clone\] \[--depth\] \[1\] \[--quiet\] \[--\] \[https:\/\/example\.invalid\/me\/ty-notify\.git\] \[.*\/ty-notify\]$/,
  );
  assert.equal(calls[1], "env: 0 https:ssh:file ssh -o BatchMode=yes");
  // Its own process group: a timeout or a signal ends git and whatever it started.
  const [, pgid, pid] = calls[2].split(" ");
  assert.equal(pgid, pid);
  assert.deepEqual([...Deno.readDirSync(root)], []);
});

Deno.test("SIGTERM to plugins add ends git's whole group and leaves no staging folder", async () => {
  const root = await makeTree({});
  const pids = join(root, "..", `child-${crypto.randomUUID()}.pid`);
  const { bin } = await fakeGit(`sleep 60 & echo $! > "${pids}"; wait`);
  const child = spawnCli(
    ["plugins", "add", "https://example.invalid/x.git", "--plugins-dir", root],
    { env: { PATH: `${bin}:${Deno.env.get("PATH")}` } },
  );
  const sleeper = await readPid(pids, 10_000);
  assert.ok(alive(sleeper));
  child.kill("SIGTERM");
  const status = await child.status;
  assert.equal(status.code, 143);
  assert.ok(await waitGone(sleeper, 5000), "git's child outlived tyhooks");
  assert.deepEqual([...Deno.readDirSync(root)], []);
  await Deno.remove(pids).catch(() => {});
});
