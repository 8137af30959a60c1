import assert from "node:assert/strict";
import { join } from "node:path";
import { startServices } from "../../lib/services/service_set.ts";
import { fileLines, serviceIndex } from "./_index.ts";

// SPEC's own timings, not injected ones: this is the "Done when" of the services issue.
Deno.test("a service that exits 1 at once is started 3 times in its first ~4 s, 1 s then 2 s apart", async () => {
  const { index, dir } = await serviceIndex([{
    name: "crash",
    command: "date +%s%N >> starts; exit 1",
  }]);
  const set = startServices(index);
  try {
    await new Promise((r) => setTimeout(r, 4500));
  } finally {
    await set.stop({ stopTimeoutMs: 1000 });
  }
  const starts = (await fileLines(join(dir, "starts"))).map((ns) =>
    Number(BigInt(ns) / 1_000_000n)
  );
  assert.equal(starts.length, 3, `starts at ${starts.map((t) => t - starts[0])} ms`);
  const gaps = [starts[1] - starts[0], starts[2] - starts[1]];
  // Generous bounds: the spec'd delays are 1000 and 2000 ms, plus a spawn and an exit each.
  assert.ok(gaps[0] >= 900 && gaps[0] < 1700, `first gap ${gaps[0]} ms`);
  assert.ok(gaps[1] >= 1900 && gaps[1] < 2700, `second gap ${gaps[1]} ms`);
  const [status] = set.status();
  assert.deepEqual([status.state, status.restarts], ["stopped", 2]);
});
