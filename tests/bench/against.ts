/**
 * Warm CLI calls of this tree against another checkout, interleaved in one run:
 * `deno run -A tests/bench/against.ts OTHER_CHECKOUT [ROUNDS]`. It answers "is this change
 * slower than before?" for the three calls a host program makes most: warm `route`, warm
 * `tool pre`, `fire` to one plugin. Each call runs from source with the
 * binary's flags, against the same plugins, its own index cache already warm; medians, and the
 * ratio this/other.
 *
 * The binary's flags are this tree's for both, so the ratio is the code's alone. With
 * `--own-flags` each tree runs with the V8 flags of its own `deno task compile`: the two as
 * shipped, the ratio a user upgrading from the other tree would see.
 *
 * Make the other checkout with `git worktree add --detach /tmp/base <rev>`.
 */

import { join } from "node:path";
import { MAIN, PERMISSION_FLAGS, START_FLAGS, V8_FLAGS } from "../_cli.ts";
import { median, ms, pairedInterval, pairedRatio } from "./_stats.ts";

const ownFlags = Deno.args.includes("--own-flags");
const [other, roundsArg] = Deno.args.filter((arg) => arg !== "--own-flags");
if (other === undefined) {
  console.error("usage: deno run -A tests/bench/against.ts OTHER_CHECKOUT [ROUNDS] [--own-flags]");
  Deno.exit(64);
}
const rounds = Number(roundsArg ?? 30);
const otherFlags = ownFlags
  ? JSON.parse(Deno.readTextFileSync(join(other, "deno.json"))).tasks.compile.command
    .match(/--v8-flags=\S+/g) ?? []
  : V8_FLAGS;

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
  const flags = { this: V8_FLAGS, other: otherFlags };
  // Deno keeps one compiled copy of a module, made with the flags of the run that compiled it: the
  // modules both trees load (Deno's own process and streams modules) would be compiled afresh on
  // every call. (_cli.ts has set DENO_DIR.) The other tree's flags, when they differ, get a
  // DENO_DIR of their own, the npm packages shared.
  const denoDirs = { this: Deno.env.get("DENO_DIR")!, other: Deno.env.get("DENO_DIR")! };
  if (flags.other.join(" ") !== flags.this.join(" ")) {
    denoDirs.other = join(dir, "deno-other");
    Deno.mkdirSync(denoDirs.other);
    Deno.symlinkSync(join(denoDirs.this, "npm"), join(denoDirs.other, "npm"));
  }
  const once = async (tree: "this" | "other", args: string[], cache: string) => {
    const started = performance.now();
    const out = await new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--quiet",
        ...PERMISSION_FLAGS,
        ...START_FLAGS,
        ...flags[tree],
        trees[tree],
        "--plugins-dir",
        plugins,
        ...args,
      ],
      // The decision log (where the tree has one) is written, as by default, under the run's
      // temp dir (importing _cli.ts turned it off for this process's children).
      env: {
        DENO_DIR: denoDirs[tree],
        XDG_CACHE_HOME: cache,
        XDG_STATE_HOME: join(dir, "state"),
        TYHOOKS_DECISION_LOG: "",
        NO_COLOR: "1",
      },
      stdout: "null",
      stderr: "piped",
    }).output();
    if (!out.success) {
      throw new Error(`${trees[tree]} ${args.join(" ")}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return performance.now() - started;
  };
  const times = new Map<string, number[]>();
  for (let round = -2; round < rounds; round++) {
    for (const [call, args] of Object.entries(CALLS)) {
      // Alternate which tree goes first; the first two rounds only warm caches.
      const order = ["this", "other"] as const;
      for (const label of round % 2 ? order.toReversed() : order) {
        const took = await once(label, args, join(dir, `cache-${label}`));
        if (round >= 0) {
          times.set(`${call}|${label}`, [...times.get(`${call}|${label}`) ?? [], took]);
        }
      }
    }
  }
  console.log(
    `${rounds} rounds, interleaved; medians, and the median of each round's ratio with its 95% interval`,
  );
  console.log(`  V8 flags: this ${flags.this.join(" ")}, other ${flags.other.join(" ")}`);
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
