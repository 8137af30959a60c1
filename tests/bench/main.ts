/**
 * `deno task bench`: the five benchmarks, each a ratio against a baseline measured in the same
 * run (the machines are small and noisy: medians and ratios, never one absolute time).
 *
 * 1. runner overhead vs the cheapest group-isolating spawn      tests/bench/runner.ts
 * 2. `tyhooks route` end to end, cold and warm, vs its floor     tests/bench/route_cli.ts
 * 3. daemon `POST /v1/route` p50 vs one bare router spawn        tests/bench/serve.ts
 *    and `POST /v1/tool/pre` with a persistent and a one-shot guard
 * 4. fan-out of one event to 1, 10, 50 plugins                  tests/bench/fanout.ts
 * 5. loading 1,000 plugins, in process and `plugins list`        tests/bench/load.ts
 */

import { benchRunner } from "./runner.ts";
import { benchRouteCli } from "./route_cli.ts";
import { benchGuard, benchServe } from "./serve.ts";
import { benchFanout } from "./fanout.ts";
import { benchLoad } from "./load.ts";

const sections: [string, () => Promise<string[][]>][] = [
  ["1. runner per call (median), ratio to a bare setsid(1) spawn", () => benchRunner()],
  [
    "2. tyhooks route end to end (median), ratio to deno run empty.ts + one router spawn",
    () => benchRouteCli(),
  ],
  ["3. daemon POST /v1/route, 2,000 requests", () => benchServe()],
  ["3b. daemon POST /v1/tool/pre: persistent guard vs one-shot guard", () => benchGuard()],
  ["4. fan-out of one event (median per fire), ratio to 1 plugin", () => benchFanout()],
  ["5. loading 1,000 plugins (median), against its goals", () => benchLoad()],
];

console.log(
  `tyhooks bench: Deno ${Deno.version.deno}, ${navigator.hardwareConcurrency} cpus, ${Deno.build.os}`,
);
for (const [title, run] of sections) {
  console.log(`\n${title}`);
  const rows = await run();
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  for (const row of rows) {
    console.log(`  ${row.map((cell, i) => (cell ?? "").padEnd(widths[i])).join("  ")}`.trimEnd());
  }
}
