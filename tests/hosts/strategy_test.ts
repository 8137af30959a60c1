import assert from "node:assert/strict";
import { type Candidate, choose, formatBytes } from "../../lib/hosts/strategy.ts";

const GiB = 2 ** 30;

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
