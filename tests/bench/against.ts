/**
 * Warm CLI calls of this tree against another checkout, interleaved in one run:
 * `deno run -A tests/bench/against.ts OTHER_CHECKOUT [ROUNDS]`. It answers "is this change
 * slower than before?" for the three calls a host program makes most: warm `route`, warm
 * `tool pre`, `fire` to one plugin. Each call runs from source with the
 * binary's flags, against the same plugins, its own index cache already warm; medians, and the
 * ratio this/other.
 *
 * Make the other checkout with `git worktree add --detach /tmp/base <rev>`.
 */

import { join } from "node:path";
import { MAIN, PERMISSION_FLAGS, START_FLAGS, V8_FLAGS } from "../_cli.ts";
import { median, ms, pairedInterval, pairedRatio } from "./_stats.ts";

const [other, roundsArg] = Deno.args;
if (other === undefined) {
  console.error("usage: deno run -A tests/bench/against.ts OTHER_CHECKOUT [ROUNDS]");
  Deno.exit(64);
}
const rounds = Number(roundsArg ?? 30);

const CALLS: Record<string, string[]> = {
  "route (warm)": ["route", "--task-json", '{"id":1}'],
  "tool pre (warm)": ["tool", "pre", "--tool", "bash"],
  // No --plugin: older trees lack it, and only one plugin handles task.done here.
  "fire, 1 plugin": ["fire", "task.done", "--task-json", '{"id":1}'],
};

const dir = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
try {
  const plugins = join(dir, "plugins");
  const hook = (name: string, event: string, body: string) => {
    Deno.mkdirSync(join(plugins, name), { recursive: true });
    Deno.writeTextFileSync(
      join(plugins, name, "plugin.yaml"),
      `name: ${name}\nhooks:\n  ${event}: h.sh\n`,
    );
    Deno.writeTextFileSync(join(plugins, name, "h.sh"), `#!/bin/sh\n${body}\n`, { mode: 0o755 });
  };
  hook("router", "task.route", "echo CLAUDE_CONFIG_DIR=/p/work");
  hook("guard", "pre_tool_call", "exit 0");
  hook("note", "task.done", "exit 0");

  const trees = { this: MAIN, other: join(other, "main.ts") };
  const once = async (main: string, args: string[], cache: string) => {
    const started = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        ...PERMISSION_FLAGS,
        ...START_FLAGS,
        ...V8_FLAGS,
        main,
        "--plugins-dir",
        plugins,
        ...args,
      ],
      // The decision log (where the tree has one) is written, as by default, under the run's
      // temp dir (importing _cli.ts turned it off for this process's children).
      env: {
        XDG_CACHE_HOME: cache,
        XDG_STATE_HOME: join(dir, "state"),
        TYHOOKS_DECISION_LOG: "",
        NO_COLOR: "1",
      },
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`${main} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return performance.now() - started;
  };
  const times = new Map<string, number[]>();
  for (let round = -2; round < rounds; round++) {
    for (const [call, args] of Object.entries(CALLS)) {
      // Alternate which tree goes first; the first two rounds only warm caches.
      const order = Object.entries(trees);
      if (round % 2) order.reverse();
      for (const [label, main] of order) {
        const took = await once(main, args, join(dir, `cache-${label}`));
        if (round >= 0) {
          times.set(`${call}|${label}`, [...times.get(`${call}|${label}`) ?? [], took]);
        }
      }
    }
  }
  console.log(
    `${rounds} rounds, interleaved; medians, and the median of each round's ratio with its 95% interval`,
  );
  for (const call of Object.keys(CALLS)) {
    const mine = times.get(`${call}|this`)!;
    const theirs = times.get(`${call}|other`)!;
    const [low, high] = pairedInterval(mine, theirs).map((r) => r.toFixed(3));
    console.log(
      `  ${call.padEnd(16)} this ${ms(median(mine))}  other ${ms(median(theirs))}  this/other ${
        (median(mine) / median(theirs)).toFixed(3)
      }  paired ${pairedRatio(mine, theirs).toFixed(3)} (${low}-${high})`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
