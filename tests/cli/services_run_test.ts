import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, spawnCli } from "../_cli.ts";
import { alive, exists, readPid, until } from "../_procs.ts";
import { within } from "../../lib/async.ts";

/** `tyhooks services run` in the background, so a test can signal it. */
function serviceRun(
  args: string[],
  env: Record<string, string> = {},
  stderr: "piped" | "null" = "piped",
) {
  const child = spawnCli(["services", "run", ...args], { env, stderr });
  const output = child.output();
  return {
    child,
    /** For a failing test: SIGTERM the supervisor (which stops its services) and wait for it. */
    async [Symbol.asyncDispose]() {
      try {
        child.kill("SIGTERM");
      } catch {
        // Already exited.
      }
      await output;
    },
    async finish(): Promise<{ code: number; stdout: string; stderr: string }> {
      const out = await output;
      const decoder = new TextDecoder();
      return {
        code: out.code,
        stdout: decoder.decode(out.stdout),
        stderr: stderr === "piped" ? decoder.decode(out.stderr) : "",
      };
    },
  };
}

/** A plugins dir holding plugin `name`, its `services:` the YAML `services`, and its `files`. */
function servicePlugins(
  name: string,
  services: string,
  files: Record<string, string> = {},
): Promise<string> {
  return makeTree({
    [`${name}/plugin.yaml`]: `name: ${name}\nservices:\n${services}`,
    ...Object.fromEntries(Object.entries(files).map(([path, text]) => [`${name}/${path}`, text])),
  });
}

Deno.test("services run starts a service with the injected TY_API_URL and its own FOO=bar, and SIGTERM stops it with exit 0", async () => {
  const plugins = await servicePlugins(
    "web",
    '  - name: api\n    command: ./serve.sh\n    env: ["FOO=bar"]\n',
    {
      // The pid is written last: once it is there, the output is in the pipe.
      "serve.sh": '#!/bin/sh\nenv > env.txt\necho ready\nprintf partial\necho "$$" > pid\n' +
        "exec sleep 300\n",
    },
  );
  await using run = serviceRun(
    ["--plugins-dir", plugins, "--env", "TY_API_URL=http://127.0.0.1:7777", "--env", "FOO=flag"],
    { TY_DB_PATH: "/tmp/ty-test.db" },
  );
  const pid = await readPid(join(plugins, "web", "pid"), 15_000);
  const env = (await Deno.readTextFile(join(plugins, "web", "env.txt"))).split("\n");
  assert.ok(env.includes("TY_API_URL=http://127.0.0.1:7777"));
  assert.ok(env.includes("FOO=bar"), "the service's own env wins over --env");
  assert.ok(env.includes("TY_DB_PATH=/tmp/ty-test.db"), "TY_DB_PATH is passed through");
  run.child.kill("SIGTERM");
  const { code, stdout, stderr } = await run.finish();
  assert.equal(code, 0);
  assert.equal(stdout, "");
  assert.ok(!alive(pid), "the service is gone");
  assert.match(stderr, /^\[web\/api\] ready$/m);
  assert.match(stderr, /^\[web\/api\] partial$/m, "the partial last line is flushed at exit");
  assert.match(stderr, /Started service "web\/api" \(pid=\d+\)/);
  assert.match(stderr, /Service "web\/api" was killed by SIGTERM/);
});

Deno.test("services run stops its services on SIGQUIT (Ctrl-\\) as on SIGTERM: exit 0, nothing left running", async () => {
  const plugins = await servicePlugins("q", "  - name: s\n    command: ./s.sh\n", {
    "s.sh": '#!/bin/sh\necho "$$" > pid\nexec sleep 300\n',
  });
  await using run = serviceRun(["--plugins-dir", plugins]);
  const pid = await readPid(join(plugins, "q", "pid"), 15_000);
  run.child.kill("SIGQUIT");
  const { code, stderr } = await run.finish();
  assert.equal(code, 0, stderr);
  assert.ok(!alive(pid), "the service is gone");
});

Deno.test("services run kills a service that ignores SIGTERM within --stop-timeout + 1 s and leaves no child", async () => {
  const plugins = await servicePlugins(
    "stubborn",
    "  - name: trap\n    command: ./trap.sh\n  - name: forker\n    command: ./fork.sh\n",
    {
      "trap.sh": "#!/bin/sh\ntrap '' TERM\necho \"$$\" > trap.pid\n" +
        "while :; do sleep 0.05; done\n",
      "fork.sh": "#!/bin/sh\nsleep 300 &\necho $! > child1.pid\n" +
        "(trap '' TERM; sleep 300) &\necho $! > child2.pid\nwait\n",
    },
  );
  await using run = serviceRun(["--plugins-dir", plugins, "--stop-timeout", "1s"]);
  const dir = join(plugins, "stubborn");
  const pids = [
    await readPid(join(dir, "trap.pid"), 15_000),
    await readPid(join(dir, "child1.pid"), 5000),
    await readPid(join(dir, "child2.pid"), 5000),
  ];
  for (const pid of pids) assert.ok(alive(pid), `pid ${pid} is running before the signal`);
  const sent = performance.now();
  run.child.kill("SIGINT");
  const { code, stderr } = await run.finish();
  const elapsed = performance.now() - sent;
  assert.equal(code, 0);
  assert.ok(elapsed < 2000, `exited ${Math.round(elapsed)} ms after SIGINT`);
  for (const pid of pids) assert.ok(!alive(pid), `pid ${pid} survived`);
  assert.match(
    stderr,
    /Service "stubborn\/trap" was still running 1000 ms after SIGTERM: sent SIGKILL/,
  );
});

Deno.test("a service printing 300 MB without a newline leaves the supervisor's peak memory under 200 MB", async () => {
  // In "sh -c", $PPID is tyhooks (setsid execs in place): the service reads its peak RSS.
  const plugins = await servicePlugins(
    "flood",
    "  - name: zeros\n    command: 'head -c 300000000 /dev/zero; " +
      "grep VmHWM /proc/$PPID/status > hwm.tmp; mv hwm.tmp hwm; exec sleep 300'\n",
  );
  await using run = serviceRun(["--plugins-dir", plugins], {}, "null");
  const hwm = join(plugins, "flood", "hwm");
  let text = "";
  // Relayed escaped ("\x00"), the NULs are 1.2 GB on stderr: tens of seconds on a loaded machine.
  const deadline = Date.now() + 90_000;
  while (text === "" && Date.now() < deadline) {
    text = await Deno.readTextFile(hwm).catch(() => "");
    if (text === "") await new Promise((r) => setTimeout(r, 20));
  }
  run.child.kill("SIGTERM");
  assert.equal((await run.finish()).code, 0);
  const kb = Number(/VmHWM:\s+(\d+)/.exec(text)?.[1]);
  assert.ok(kb > 0 && kb < 200 * 1024, `peak RSS ${kb} kB`);
});

Deno.test("services run rejects a malformed --env with a usage error naming it", async () => {
  for (const bad of ["NOEQUALS", "1X=y", "=v"]) {
    const r = await cli(["services", "run", "--plugins-dir", "/nonexistent", "--env", bad]);
    assert.equal(r.code, 64);
    assert.ok(r.stderr.includes(`Invalid value "${bad}" for flag "--env"`), r.stderr);
  }
});

Deno.test("services run with no services says so and exits 0 at once", async () => {
  const plugins = await makeTree({});
  const r = await cli(["services", "run", "--plugins-dir", plugins]);
  assert.equal(r.code, 0);
  assert.match(r.stderr, /No services to supervise/);
});

Deno.test("services run rejects a bad --stop-timeout", async () => {
  const r = await cli([
    "services",
    "run",
    "--plugins-dir",
    "/nonexistent",
    "--stop-timeout",
    "soon",
  ]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Invalid duration "soon" for flag "--stop-timeout"/);
});

Deno.test("services run exits 1 by itself once every service was given up", async () => {
  // Five quick failures with the real backoff (1 + 2 + 4 + 8 s): about 15 s.
  const plugins = await servicePlugins("p", "  - name: crash\n    command: exit 3\n");
  const r = await cli(["services", "run", "--plugins-dir", plugins], {
    env: { TYHOOKS_NO_CACHE: "1" },
  });
  assert.equal(r.code, 1);
  assert.match(r.stderr, /Giving up on service "p\/crash"/);
  assert.match(r.stderr, /Every service was given up/);
});

/**
 * `services run` with stderr to a pipe this test does not read, its service printing `lines`
 * numbered lines. Returns once the service has printed them all (the relay took all but a pipe's
 * worth), or after 10 s when it is held back.
 */
async function unreadStderr(lines: number, args: string[] = []) {
  const plugins = await servicePlugins(
    "chatty",
    `  - name: talk\n    command: 'seq 1 ${lines}; touch printed; exec sleep 300'\n`,
  );
  const child = spawnCli(["services", "run", "--plugins-dir", plugins, ...args], {
    stdout: "null",
  });
  const printed = join(plugins, "chatty", "printed");
  await until(() => exists(printed), 10_000);
  return child;
}

// The exit code, or null when the child is still running after `ms`.
async function exitWithin(child: Deno.ChildProcess, ms: number): Promise<number | null> {
  return await within(child.status, ms) ? (await child.status).code : null;
}

Deno.test("services run whose stderr nobody reads stops on SIGTERM within --stop-timeout + 1 s", async () => {
  // 200000 relayed lines are about 3 MB: far more than the pipe and the writer's bound hold.
  const child = await unreadStderr(200_000, ["--stop-timeout", "1s"]);
  try {
    const sent = performance.now();
    child.kill("SIGTERM");
    // The bound is 2 s; 2 s more for a loaded machine, and past 10 s it is stuck.
    const code = await exitWithin(child, 10_000);
    const elapsed = performance.now() - sent;
    assert.equal(code, 0, "exited 0 after SIGTERM");
    assert.ok(elapsed < 4000, `exited ${Math.round(elapsed)} ms after SIGTERM`);
  } finally {
    if (await exitWithin(child, 0) === null) child.kill("SIGKILL");
    await child.stderr.cancel();
    await child.status;
  }
});

Deno.test("services run relays a service's clipboard write and screen clear escaped, never raw", async () => {
  const plugins = await servicePlugins("evil", "  - name: out\n    command: ./out.sh\n", {
    "out.sh": "#!/bin/sh\nprintf 'A\\033]52;c;aGk=\\007\\033[2J\\302\\2332J\\177\\n'\n" +
      'echo "$$" > pid\nexec sleep 300\n',
  });
  await using run = serviceRun(["--plugins-dir", plugins]);
  await readPid(join(plugins, "evil", "pid"), 15_000);
  run.child.kill("SIGTERM");
  const { code, stderr } = await run.finish();
  assert.equal(code, 0);
  const raw = ["\x07", "\x1b", "\x7f", "\u009b"].filter((c) => stderr.includes(c));
  assert.deepEqual(raw, [], JSON.stringify(stderr));
  assert.match(stderr, /^\[evil\/out\] A\\x1b\]52;c;aGk=\\x07\\x1b\[2J\\x9b2J\\x7f$/m);
});

Deno.test("services run whose stderr reader stalls, then reads again, gets the lines in order and how many were dropped where", async () => {
  const child = await unreadStderr(200_000);
  try {
    let text = "";
    const decoder = new TextDecoder();
    const reading = (async () => {
      for await (const chunk of child.stderr) text += decoder.decode(chunk, { stream: true });
    })();
    for (let i = 0; i < 100 && accountedLines(text).next <= 200_000; i++) {
      await new Promise((r) => setTimeout(r, 100));
    }
    child.kill("SIGTERM");
    assert.equal((await child.status).code, 0);
    await reading;
    const { next, notices } = accountedLines(text);
    assert.ok(notices > 0, "some lines were dropped");
    assert.equal(next, 200_001, "every line is relayed or counted as dropped");
    assert.match(
      text.slice(text.lastIndexOf("Dropped output")),
      /Service "chatty\/talk" was killed/,
    );
  } finally {
    if (await exitWithin(child, 0) === null) child.kill("SIGKILL");
    await child.status;
  }
});

/**
 * Reads the relayed numbers 1, 2, 3 ... in `text`, each notice of dropped lines skipping as many:
 * throws when a number is not the next one. Returns the next number expected.
 */
function accountedLines(text: string): { next: number; notices: number } {
  let next = 1;
  let notices = 0;
  // The last piece is a line still being read, if any.
  for (const line of text.split("\n").slice(0, -1)) {
    const dropped = /Dropped output: stderr was not read fast enough \(dropped_lines=(\d+)\)/
      .exec(line);
    const relayed = /^\[chatty\/talk\] (\d+)$/.exec(line);
    if (dropped !== null) {
      next += Number(dropped[1]);
      notices++;
    } else if (relayed !== null) {
      assert.equal(Number(relayed[1]), next, `line ${next} expected, in order`);
      next++;
    }
  }
  return { next, notices };
}
