import assert from "node:assert/strict";
import { join } from "node:path";
import type { HostEntry } from "../../lib/hosts/hosts_file.ts";
import { createLogger } from "../../lib/log.ts";
import { fixture, groupGone, readPid, waitGone } from "../_procs.ts";
import { tempDir } from "../_cli.ts";
import { type Candidate, choose, formatBytes, pickHost } from "../../lib/hosts/pick.ts";

const STUB = fixture("probe_stub.sh");
const GiB = 2 ** 30;

function stub(name: string, ...args: (string | number)[]): HostEntry {
  return { name, workdir: `/w/${name}`, probe: [STUB, ...args.map(String)], line: 0 };
}

function ok(name: string, memGiB: number, load = 0.5, cpus = 4): HostEntry {
  return stub(name, "ok", name, Math.round(memGiB * GiB), load, cpus);
}

function logSink(): { lines: string[]; log: ReturnType<typeof createLogger> } {
  const lines: string[] = [];
  return { lines, log: createLogger({ write: (line) => lines.push(line) }) };
}

Deno.test("pickHost() over 3 hosts picks the most free memory and gives its workdir", async () => {
  const { answer, outcomes } = await pickHost([ok("a", 4), ok("b", 12.3), ok("c", 8)], {
    timeoutMs: 5000,
  });
  assert.deepEqual(answer, {
    target: "b",
    workdir: "/w/b",
    reason: "most free memory: 12.3 GiB of 32.0 GiB",
  });
  assert.deepEqual(outcomes.map((o) => [o.host.name, o.reason]), [["a", null], ["b", null], [
    "c",
    null,
  ]]);
});

Deno.test("pickHost() over 20 hosts with least-loaded picks the lowest load per cpu", async () => {
  const hosts = Array.from(
    { length: 20 },
    (_, i) => ok(`h${String(i).padStart(2, "0")}`, 8, 1 + i, 4),
  );
  hosts[13] = ok("h13", 1, 0.2, 8);
  const { answer } = await pickHost(hosts, { strategy: "least-loaded", timeoutMs: 5000 });
  assert.deepEqual(answer, {
    target: "h13",
    workdir: "/w/h13",
    reason: "least loaded: 0.03 per cpu (load 0.20, 8 cpus)",
  });
});

Deno.test("pickHost() breaks a tie by name under both strategies", async () => {
  const hosts = [ok("zeta", 8, 0.4, 4), ok("alpha", 8, 0.2, 2), ok("mid", 2, 3, 1)];
  for (const strategy of ["most-free-memory", "least-loaded"] as const) {
    const { answer } = await pickHost(hosts, { strategy, timeoutMs: 5000 });
    assert.equal(answer.target, "alpha", strategy);
  }
});

Deno.test("pickHost() drops hosts that fail, print garbage or a wrong answer, and logs why", async () => {
  const { lines, log } = logSink();
  const wrong = {
    name: "wrong",
    workdir: "",
    line: 0,
    probe: ["/bin/sh", "-c", `echo '{"hostname":"x","cpus":"8"}'`],
  };
  const { answer } = await pickHost(
    [
      stub("ssh-down", "fail", 255),
      stub("noisy", "garbage"),
      wrong,
      ok("good", 1),
      stub("gone", "fail", 1),
    ],
    { timeoutMs: 5000, log },
  );
  assert.equal(answer.target, "good");
  const text = lines.join("");
  assert.match(
    text,
    /warn: Host "ssh-down" dropped: exited 255: ssh: connect to host x port 22: Connection refused/,
  );
  assert.match(text, /warn: Host "noisy" dropped: printed garbage: "Welcome to the machine"/);
  assert.match(
    text,
    /warn: Host "wrong" dropped: wrong probe answer: "os": missing \(and \d+ more\)/,
  );
  assert.match(text, /warn: Host "gone" dropped: exited 1/);
  assert.equal(lines.length, 4);
});

Deno.test("pickHost() with no usable host answers local and lists why each was dropped", async () => {
  const { answer } = await pickHost(
    [
      stub("a", "fail", 255),
      stub("b", "garbage"),
      stub("c", "hang", join(await tempDir(), "c")),
    ],
    { timeoutMs: 500 },
  );
  assert.deepEqual(answer, {
    target: "",
    workdir: "",
    reason:
      "no host answered: a (exited 255: ssh: connect to host x port 22: Connection refused), " +
      'b (printed garbage: "Welcome to the machine"), c (timed out after 500 ms)',
  });
});

Deno.test("pickHost() of no hosts answers local", async () => {
  const { answer } = await pickHost([]);
  assert.deepEqual(answer, { target: "", workdir: "", reason: "no host answered: no host listed" });
});

Deno.test("pickHost() says which probe could not start", async () => {
  const missing = { name: "m", workdir: "", line: 0, probe: ["/nonexistent/probe"] };
  const { answer } = await pickHost([missing], { timeoutMs: 2000 });
  assert.match(
    answer.reason,
    /^no host answered: m \(Cannot start "\/nonexistent\/probe": no such file\)$/,
  );
});

async function fleet(
  size: number,
  hung: number,
): Promise<{ hosts: HostEntry[]; pidFiles: string[] }> {
  const dir = await tempDir({ prefix: "tyhooks-fleet-" });
  const hosts: HostEntry[] = [];
  const pidFiles: string[] = [];
  for (let i = 0; i < size; i++) {
    const name = `host-${String(i).padStart(3, "0")}`;
    if (i % 10 === 3 && pidFiles.length < hung) {
      const pidFile = join(dir, name);
      pidFiles.push(pidFile);
      // Half of them ignore SIGTERM, so the grace and SIGKILL are inside the bound too.
      hosts.push(stub(name, pidFiles.length % 2 ? "hang" : "stubborn", pidFile));
    } else if (i === 57) {
      hosts.push(stub(name, "late", name, 64 * GiB)); // Would win, but answers after the deadline.
    } else {
      hosts.push(ok(name, i === 42 ? 20 : 1 + (i % 7)));
    }
  }
  return { hosts, pidFiles };
}

Deno.test("pickHost() over 100 hosts, 10 hung, picks the right host within timeout + 1 s and ends every hung group", async () => {
  const { hosts, pidFiles } = await fleet(100, 10);
  const { lines, log } = logSink();
  const started = performance.now();
  // pick-host's default timeout: on a busy machine 89 probes may need more than 1 s to answer.
  const { answer, outcomes } = await pickHost(hosts, { timeoutMs: 3000, log });
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 4000, `returned after ${Math.round(elapsed)} ms`);
  assert.deepEqual(answer, {
    target: "host-042",
    workdir: "/w/host-042",
    reason: "most free memory: 20.0 GiB of 32.0 GiB",
  });
  const dropped = outcomes.filter((o) => o.facts === null).map((o) => o.host.name);
  assert.equal(dropped.length, 11);
  assert.equal(lines.length, 11);
  assert.match(lines.join(""), /Host "host-057" dropped: timed out after 3000 ms/);
  // SIGKILL takes effect asynchronously, and a loaded machine (tests run four files at once)
  // may not have run it yet when pickHost() returns: 500 ms for the stubs and their children.
  for (const pidFile of pidFiles) {
    assert.ok(await waitGone(await readPid(pidFile), 500), pidFile);
    assert.ok(await waitGone(await readPid(`${pidFile}.child`), 500), `${pidFile}.child`);
  }
  for (const outcome of outcomes.filter((o) => o.facts === null)) {
    assert.ok(groupGone(outcome.pid!), `group of ${outcome.host.name} is gone`);
  }
});

Deno.test("pickHost() keeps its deadline when hung hosts outnumber the parallelism", async () => {
  const { hosts } = await fleet(40, 4);
  const started = performance.now();
  // 2 s: the free slot's nine quick probes fit well inside it even with four test files at once
  // on two cores, where 700 ms was not enough.
  const { answer, outcomes } = await pickHost(hosts.toReversed(), {
    timeoutMs: 2000,
    parallelism: 2,
  });
  const elapsed = performance.now() - started;
  assert.ok(elapsed < 3000, `returned after ${Math.round(elapsed)} ms`);
  // Two slots: host-033, the first hung host met, holds one until the deadline; the other
  // probes host-032 down to host-024 and is then held by host-023. Nobody asks the rest.
  const unasked = outcomes.filter((o) => o.reason?.startsWith("not probed"));
  assert.deepEqual(
    unasked.map((o) => o.host.name),
    hosts.slice(0, 23).map((h) => h.name).toReversed(),
  );
  assert.equal(unasked[0].reason, "not probed: the 2000 ms deadline passed first");
  assert.equal(answer.target, "host-027", "7 GiB, tied with host-034, first by name");
});

Deno.test("pickHost() stops every probe at once when its signal aborts", async () => {
  const dir = await tempDir();
  const controller = new AbortController();
  const hosts = [
    stub("a", "hang", join(dir, "a")),
    stub("b", "stubborn", join(dir, "b")),
    ok("c", 1),
  ];
  setTimeout(() => controller.abort(), 200);
  const started = performance.now();
  const { answer, outcomes } = await pickHost(hosts, {
    timeoutMs: 10_000,
    signal: controller.signal,
    parallelism: 2,
  });
  assert.ok(performance.now() - started < 1500);
  assert.deepEqual(outcomes.map((o) => o.reason), [
    "Interrupted",
    "Interrupted",
    "not probed: interrupted",
  ]);
  assert.equal(answer.target, "");
  for (const name of ["a", "b"]) {
    // b's child ignores SIGTERM too: its SIGKILL takes effect asynchronously.
    assert.ok(await waitGone(await readPid(join(dir, `${name}.child`)), 500), `${name}.child`);
    assert.ok(groupGone(await readPid(join(dir, name))), name);
  }
});

Deno.test("pickHost() hints at hosts sync when the host has no tyhooks for the default probe", async () => {
  // What ssh gives when the remote shell cannot find the command: exit 127, the shell's words.
  const missing = [
    "/bin/sh",
    "-c",
    'echo "bash: line 1: tyhooks: command not found" >&2; exit 127',
  ];
  const { answer } = await pickHost([
    { name: "gpu-9", workdir: "", probe: [...missing, "sh", "tyhooks", "probe"], line: 0 },
  ], { timeoutMs: 5000 });
  assert.equal(
    answer.reason,
    "no host answered: gpu-9 (exited 127: bash: line 1: tyhooks: command not found " +
      "(hint: tyhooks hosts sync gpu-9))",
  );
});

function host(name: string, memAvailable: number, load = 0.5, cpus = 4): Candidate {
  return {
    name,
    facts: {
      hostname: name,
      os: "linux",
      arch: "x86_64",
      cpus,
      load_avg: [load, 0, 0],
      mem_total_bytes: 32 * GiB,
      mem_available_bytes: memAvailable,
      disk_free_bytes: 0,
      uptime_s: 1,
      version: "0.1.0",
    },
  };
}

Deno.test("choose() most-free-memory takes the most available memory and says how much", () => {
  const choice = choose(
    [host("a", 4 * GiB), host("b", 12.3 * GiB), host("c", 8 * GiB)],
    "most-free-memory",
  );
  assert.deepEqual(choice, { name: "b", reason: "most free memory: 12.3 GiB of 32.0 GiB" });
});

Deno.test("choose() least-loaded divides the 1-minute load by the cpus", () => {
  const choice = choose(
    [host("a", GiB, 0.5, 1), host("b", GiB, 0.48, 4), host("c", GiB, 2, 8)],
    "least-loaded",
  );
  assert.deepEqual(choice, { name: "b", reason: "least loaded: 0.12 per cpu (load 0.48, 4 cpus)" });
  assert.equal(
    choose([host("z", GiB, 0, 1)], "least-loaded").reason,
    "least loaded: 0.00 per cpu (load 0.00, 1 cpu)",
  );
});

Deno.test("choose() breaks ties by name, whatever the order given", () => {
  const tied = [
    host("web-2", 8 * GiB, 0.4, 4),
    host("web-10", 8 * GiB, 0.2, 2),
    host("db", GiB, 3, 1),
  ];
  assert.equal(choose(tied, "most-free-memory").name, "web-10");
  assert.equal(choose(tied.toReversed(), "most-free-memory").name, "web-10");
  assert.equal(choose(tied, "least-loaded").name, "web-10", "0.10 per cpu each");
  assert.equal(choose(tied.toReversed(), "least-loaded").name, "web-10");
});

Deno.test("choose() counts loads equal to 0.01 per cpu as a tie", () => {
  const close = [host("b", GiB, 0.401, 4), host("a", GiB, 0.404, 4)];
  assert.equal(choose(close, "least-loaded").name, "a");
});

Deno.test("choose() refuses an empty list", () => {
  assert.throws(() => choose([], "least-loaded"), RangeError);
});

Deno.test("formatBytes() uses binary units with one decimal", () => {
  assert.equal(formatBytes(0), "0 B");
  assert.equal(formatBytes(1023), "1023 B");
  assert.equal(formatBytes(1536), "1.5 KiB");
  assert.equal(formatBytes(31.2 * GiB), "31.2 GiB");
  assert.equal(formatBytes(3 * 1024 * GiB), "3.0 TiB");
});
