import assert from "node:assert/strict";
import { lchown } from "node:fs/promises";
import { dirname, join } from "node:path";
import {
  cli,
  MAIN,
  makeTree,
  NEEDS_ROOT,
  PERMISSION_FLAGS,
  pickHostStartupMs,
  ROOT,
  tempDir,
} from "../_cli.ts";
import { fixture, readPid, waitGone } from "../_procs.ts";
import { runScript } from "../../lib/process/run_script.ts";

const STUB = fixture("probe_stub.sh");
const GiB = 2 ** 30;

/** A stub host line: `NAME WORKDIR -- probe_stub.sh ARGS...`. */
function line(name: string, workdir: string, ...args: (string | number)[]): string {
  return `${name} ${workdir} -- '${STUB}' ${args.join(" ")}`.replace(/ {2}/, " ");
}

async function hostsFile(lines: string[]): Promise<string> {
  const dir = await makeTree({ hosts: lines.join("\n") + "\n" });
  return join(dir, "hosts");
}

Deno.test("tyhooks pick-host reads comments and workdirs and prints the placement answer", async () => {
  const file = await hostsFile([
    "# fleet of three",
    "",
    line("gpu-1", "~/work", "ok", "gpu-1", 4 * GiB, 0.2, 8),
    `gpu-2 /srv/ty -- printf '%s' "$(cat gpu-2.json)"`,
    "   # the build box has no workdir",
    line("build", "", "ok", "build", 6 * GiB, 3, 2),
  ]);
  const facts = JSON.parse(
    (await runScript(STUB, { args: ["ok", "gpu-2", String(Math.round(12.3 * GiB))] })).stdout,
  );
  await Deno.writeTextFile(join(file, "..", "gpu-2.json"), JSON.stringify(facts));
  const r = await cli(["pick-host", "--hosts", file]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.equal(
    r.stdout,
    '{"target":"gpu-2","workdir":"/srv/ty","reason":"most free memory: 12.3 GiB of 32.0 GiB"}\n',
  );
  const least = await cli(["pick-host", "--hosts", file, "--strategy", "least-loaded"]);
  assert.deepEqual(JSON.parse(least.stdout), {
    target: "gpu-1",
    workdir: "~/work",
    reason: "least loaded: 0.03 per cpu (load 0.20, 8 cpus)",
  });
});

Deno.test("tyhooks pick-host breaks ties by name", async () => {
  const file = await hostsFile([
    line("web-2", "", "ok", "web-2", 8 * GiB, 0.4, 4),
    line("web-10", "", "ok", "web-10", 8 * GiB, 0.2, 2),
  ]);
  for (const strategy of ["most-free-memory", "least-loaded"]) {
    const r = await cli(["pick-host", "--hosts", file, "--strategy", strategy]);
    assert.equal(JSON.parse(r.stdout).target, "web-10", strategy);
  }
});

Deno.test("tyhooks pick-host over 100 hosts, 10 hung, answers right within its timeout (and 100 spawns' slack) and leaves no probe behind", async () => {
  const dir = await tempDir({ prefix: "tyhooks-fleet-" });
  const lines: string[] = [];
  const pidFiles: string[] = [];
  for (let i = 0; i < 100; i++) {
    const name = `host-${String(i).padStart(3, "0")}`;
    if (i % 10 === 3) {
      pidFiles.push(join(dir, name));
      lines.push(line(name, `~/w${i}`, i % 20 === 3 ? "hang" : "stubborn", join(dir, name)));
    } else if (i === 71) {
      lines.push(line(name, "~/late", "late", name, 64 * GiB));
    } else {
      lines.push(line(name, `~/w${i}`, "ok", name, (i === 64 ? 30 : 1 + (i % 9)) * GiB));
    }
  }
  const file = await hostsFile(lines);
  const startup = await pickHostStartupMs();
  const started = performance.now();
  // The default timeout: on a busy machine 89 probes may need more than 1 s to answer.
  const r = await cli(["pick-host", "--hosts", file, "--timeout", "3s"]);
  const elapsed = performance.now() - started;
  // 3 s of timeout, then 100 probes to spawn and end on a 2-core machine that other test files
  // share: that takes up to a second or two more.
  assert.ok(
    elapsed < startup + 5500,
    `returned after ${Math.round(elapsed)} ms, of which ${Math.round(startup)} ms starting`,
  );
  assert.equal(r.code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    target: "host-064",
    workdir: "~/w64",
    reason: "most free memory: 30.0 GiB of 32.0 GiB",
  });
  assert.equal(r.stderr.trim().split("\n").length, 11);
  assert.match(r.stderr, /Host "host-071" dropped: timed out after 3000 ms/);
  assert.match(r.stderr, /Host "host-093" dropped: timed out after 3000 ms/);
  // SIGKILL takes effect asynchronously: the stubborn stubs and their children get 500 ms.
  for (const pidFile of pidFiles) {
    assert.ok(await waitGone(await readPid(pidFile), 500), pidFile);
    assert.ok(await waitGone(await readPid(`${pidFile}.child`), 500), `${pidFile}.child`);
  }
});

Deno.test("tyhooks pick-host names failed hosts in the log, and in the reason when none is left", async () => {
  const file = await hostsFile([
    line("down", "", "fail", 255),
    line("noisy", "", "garbage"),
    "empty -- true",
    `wrong -- echo '{"hostname":"w","os":"linux","arch":"x","cpus":0}'`,
  ]);
  const r = await cli(["pick-host", "--hosts", file]);
  assert.equal(r.code, 0);
  const answer = JSON.parse(r.stdout);
  assert.deepEqual([answer.target, answer.workdir], ["", ""]);
  assert.equal(
    answer.reason,
    "no host answered: down (exited 255: ssh: connect to host x port 22: Connection refused), " +
      'noisy (printed garbage: "Welcome to the machine"), empty (printed nothing), ' +
      'wrong (wrong probe answer: "cpus": expected an integer of at least 1, got 0 (and 6 more))',
  );
  for (const name of ["down", "noisy", "empty", "wrong"]) {
    assert.match(r.stderr, new RegExp(`tyhooks: warn: Host "${name}" dropped: `));
  }
});

Deno.test("tyhooks pick-host runs a probe command from the hosts file's directory", async () => {
  const dir = await makeTree({
    "fleet/hosts": "local -- ./probe.sh\n",
    "fleet/probe.sh": `#!/bin/sh\nexec '${STUB}' ok local ${2 * GiB}\n`,
  });
  const r = await cli(["pick-host", "--hosts", "fleet/hosts"], { cwd: dir });
  assert.equal(JSON.parse(r.stdout).target, "local", r.stderr);
});

Deno.test("tyhooks pick-host rejects a bad hosts line naming FILE:LINE, exit 1", async () => {
  const file = await hostsFile(["# ok so far", "a ~/w", "b ~/w extra words", "c"]);
  const r = await cli(["pick-host", "--hosts", file]);
  assert.equal(r.code, 1);
  assert.equal(r.stdout, "");
  assert.match(r.stderr, new RegExp(`^tyhooks: Invalid line in hosts file "${file}:3": 4 words`));
});

Deno.test("tyhooks pick-host: usage errors and a missing file exit 64, an unreadable file exits 1", async () => {
  const missing = await cli(["pick-host"]);
  assert.equal(missing.code, 64);
  assert.match(missing.stderr, /Missing flag "--hosts"/);
  const file = await hostsFile(["a -- true"]);
  const strategy = await cli(["pick-host", "--hosts", file, "--strategy", "random"]);
  assert.equal(strategy.code, 64);
  assert.match(
    strategy.stderr,
    /Invalid value "random" for flag "--strategy": expected most-free-memory or least-loaded/,
  );
  const timeout = await cli(["pick-host", "--hosts", file, "--timeout", "soon"]);
  assert.equal(timeout.code, 64);
  assert.match(timeout.stderr, /Invalid duration "soon" for flag "--timeout"/);
  // A missing file is a usage error, as for every flag naming a file (SPEC "Command line").
  const absent = await cli(["pick-host", "--hosts", "/nonexistent/hosts"]);
  assert.equal(absent.code, 64);
  assert.match(absent.stderr, /File "\/nonexistent\/hosts" given to "--hosts" does not exist/);
  const unreadable = await cli(["pick-host", "--hosts", dirname(file)]);
  assert.equal(unreadable.code, 1);
  assert.match(unreadable.stderr, /^tyhooks: Cannot read hosts file ".*": /);
});

Deno.test(
  "tyhooks pick-host refuses the probe commands of a hosts file named through another user's symlink (as root: lchown nobody)",
  NEEDS_ROOT,
  async () => {
    const dir = await makeTree({ "fleet/hosts": line("a", "", "ok", "a", 4 * GiB) + "\n" });
    try {
      const link = join(dir, "hosts");
      await Deno.symlink(join(dir, "fleet/hosts"), link);
      await lchown(link, 65534, 65534);
      const r = await cli(["pick-host", "--hosts", link]);
      assert.equal(r.code, 1);
      assert.equal(r.stdout, "");
      assert.match(
        r.stderr,
        /^tyhooks: Cannot run the probe command of ".*\/hosts:1": it is named through ".*\/hosts", a symlink owned by user 65534\n/,
      );
      assert.match(r.stderr, /hint: name the hosts file itself, or a link of your own/);
      // The same link, the user's (root's) own: followed.
      await lchown(link, 0, 0);
      const mine = await cli(["pick-host", "--hosts", link]);
      assert.equal(JSON.parse(mine.stdout).target, "a", mine.stderr);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  },
);

const EXAMPLE = join(ROOT, "plugins-example", "fleet-placement");

Deno.test("tyhooks pick-host on the example plugin's hosts file picks gpu-2 and logs the host that is down", async () => {
  const r = await cli(["pick-host", "--hosts", join(EXAMPLE, "hosts")]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(
    r.stdout,
    '{"target":"gpu-2","workdir":"~/work","reason":"most free memory: 39.0 GiB of 64.0 GiB"}\n',
  );
  assert.match(
    r.stderr,
    /Host "gpu-3" dropped: exited 255: ssh: connect to host gpu-3 port 22: Connection refused/,
  );
});

Deno.test("the example placement plugin's one-line script answers what the task daemon reads", async () => {
  // tyhooks on PATH, as on a real control host.
  const bin = await makeTree({
    tyhooks: `#!/bin/sh\nexec '${Deno.execPath()}' run --quiet ${
      PERMISSION_FLAGS.join(" ")
    } '${MAIN}' "$@"\n`,
  });
  const request = {
    event: "task.placement",
    task: { id: 7, title: "Train", project: "ml", repo_path: "", executor: "claude" },
  };
  const r = await runScript(join(EXAMPLE, "place.sh"), {
    cwd: EXAMPLE,
    env: {
      PATH: `${bin}:${Deno.env.get("PATH")}`,
      TASK_PLUGIN_NAME: "fleet-placement",
      TASK_PLUGIN_DIR: EXAMPLE,
    },
    stdin: JSON.stringify(request),
    timeoutMs: 5000,
  });
  assert.equal(r.exit_code, 0, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), {
    target: "gpu-2",
    workdir: "~/work",
    reason: "most free memory: 39.0 GiB of 64.0 GiB",
  });
});
