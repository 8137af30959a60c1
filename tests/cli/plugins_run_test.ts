import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, shScript, spawnCli } from "../_cli.ts";
import { TWINS } from "./_trees.ts";
import { BASH, readPid, waitGone } from "../_procs.ts";

Deno.test("plugins run streams the action's output as it comes", async () => {
  // The action prints a line, then waits until the test has seen it before finishing: only
  // output passed on live lets it end.
  const dir = await makeTree({});
  const seen = join(dir, "seen");
  const plugins = await makeTree({
    "slow/plugin.yaml": "name: slow\nactions:\n  - id: go\n    command: go.sh\n",
    "slow/go.sh": shScript(
      "echo first",
      "echo to-stderr >&2",
      `i=0; while [ ! -e "${seen}" ] && [ $i -lt 300 ]; do sleep 0.05; i=$((i+1)); done`,
      `[ -e "${seen}" ] && echo second || echo never-saw-it`,
    ),
  });
  const child = spawnCli(["plugins", "run", "slow", "go", "--plugins-dir", plugins]);
  const reader = child.stdout.getReader();
  const first = await reader.read();
  assert.equal(new TextDecoder().decode(first.value), "first\n");
  await Deno.writeTextFile(seen, "");
  let rest = "";
  for (let r = await reader.read(); !r.done; r = await reader.read()) {
    rest += new TextDecoder().decode(r.value);
  }
  const status = await child.status;
  const stderr = new TextDecoder().decode(await new Response(child.stderr).arrayBuffer());
  assert.equal(rest, "second\n");
  assert.equal(stderr, "to-stderr\n");
  assert.equal(status.code, 0);
});

Deno.test("plugins run passes its stdin to the action when it is not a terminal", async () => {
  const plugins = await makeTree({
    "p/plugin.yaml": "name: p\nactions:\n  - id: up\n    command: up.sh\n",
    "p/up.sh": "#!/bin/sh\ntr a-z A-Z\n",
  });
  const result = await cli(["plugins", "run", "p", "up", "--plugins-dir", plugins], {
    stdin: "hello from a pipe\n",
  });
  assert.deepEqual(result, { code: 0, stdout: "HELLO FROM A PIPE\n", stderr: "" });
});

Deno.test("plugins run P A -- ARGS passes every word after -- to the action's script as its argv", async () => {
  const plugins = await makeTree({
    "p/plugin.yaml": "name: p\nactions:\n  - id: args\n    command: args.sh\n",
    "p/args.sh": '#!/bin/sh\nfor a in "$@"; do printf "[%s]\\n" "$a"; done\n',
  });
  const words = ["--foo", "-x", "two words", "--help", "--", "", "--plugins-dir=/elsewhere"];
  const result = await cli([
    "plugins",
    "run",
    "p",
    "args",
    "--plugins-dir",
    plugins,
    "--",
    ...words,
  ]);
  assert.deepEqual(result, {
    code: 0,
    stdout: words.map((w) => `[${w}]\n`).join(""),
    stderr: "",
  });
  const none = await cli(["plugins", "run", "p", "args", "--plugins-dir", plugins, "--"]);
  assert.deepEqual(none, { code: 0, stdout: "", stderr: "" });
});

Deno.test("plugins run P A 42 (ty's task-id form) is a usage error showing --task-json", async () => {
  const plugins = await makeTree({
    "p/plugin.yaml": "name: p\nactions:\n  - id: up\n    command: up.sh\n",
    "p/up.sh": "#!/bin/sh\n",
  });
  const result = await cli(["plugins", "run", "p", "up", "42", "--plugins-dir", plugins]);
  assert.deepEqual(result, {
    code: 64,
    stdout: "",
    stderr: 'tyhooks: Unexpected argument "42" for "plugins run": tyhooks has no task database, ' +
      "so a task is given as JSON\n" +
      `hint: tyhooks plugins run p up --task-json '{"id":42,...}'\n`,
  });
});

// An action that prints 64 MiB, then says it finished.
const FLOOD = {
  "p/plugin.yaml": "name: p\nactions:\n  - id: flood\n    command: f.sh\n",
  "p/f.sh": "#!/bin/sh\nhead -c 67108864 /dev/zero\necho finished >&2\n",
};

Deno.test("plugins run | head: a reader that goes away leaves the action to finish, exit 0", async () => {
  const plugins = await makeTree(FLOOD);
  const child = spawnCli(["plugins", "run", "p", "flood", "--plugins-dir", plugins]);
  const reader = child.stdout.getReader();
  await reader.read();
  await reader.cancel(); // The read end closes: tyhooks' writes fail (EPIPE).
  const [status, stderr] = await Promise.all([child.status, new Response(child.stderr).text()]);
  assert.equal(status.code, 0, stderr);
  assert.match(stderr, /finished/);
});

Deno.test("plugins run | a stalled reader: the action's timeout and SIGTERM still end it", async () => {
  const plugins = await makeTree(FLOOD);
  const args = ["plugins", "run", "p", "flood", "--plugins-dir", plugins];
  // Nobody reads stdout: once the pipe is full, every write of tyhooks waits.
  const timed = spawnCli([...args, "--timeout", "1s"]);
  const [status, stderr] = await Promise.all([timed.status, new Response(timed.stderr).text()]);
  assert.equal(status.code, 124, stderr);
  assert.match(stderr, /timed out after 1000 ms/);
  await timed.stdout.cancel();
  const killed = spawnCli([...args, "--timeout", "60s"]);
  await new Promise((resolve) => setTimeout(resolve, 1000));
  killed.kill("SIGTERM");
  assert.equal((await killed.status).code, 143);
  await Promise.all([killed.stdout.cancel(), killed.stderr.cancel()]);
});

Deno.test("plugins run takes the first in path order of two plugins with one name, and the first of two actions with one id", async () => {
  const plugins = await makeTree(TWINS);
  const result = await cli(["plugins", "run", "twin", "go", "--plugins-dir", plugins], {
    env: { TYHOOKS_NO_CACHE: "1" },
  });
  assert.deepEqual(result, { code: 0, stdout: "first\n", stderr: "" });
});

Deno.test({
  name: "plugins run leaves no child the action moved to a group of its own, output let go",
  ignore: BASH === undefined,
  async fn() {
    const plugins = await makeTree({
      "p/plugin.yaml": "name: p\nactions:\n  - id: go\n    command: go.sh\n",
      "p/go.sh": `#!${BASH}\nset -m\nsleep 60 >/dev/null 2>&1 &\necho $! > stray\necho started\n`,
    });
    const r = await cli(["plugins", "run", "p", "go", "--plugins-dir", plugins]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, "started\n");
    const pid = await readPid(join(plugins, "p", "stray"));
    assert(await waitGone(pid, 1000), "the action's set -m child outlived plugins run");
  },
});
