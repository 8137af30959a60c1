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
 * With `--instructions` each call runs under valgrind (callgrind) and the figure is the number of
 * instructions it executed: on a noisy machine the one measure that repeats (within ~0.1%), so
 * three rounds tell what sixty timed ones cannot. V8 then runs single-threaded (its background
 * compiler and collector otherwise move the count by a few percent), and each tree gets a fresh
 * `DENO_DIR`. The hook's own process is not counted: the same script for both. It counts work, not
 * waiting, and runs ~50x slower, so the 100 ms output drain after a hook exits runs out there and
 * the call looks for strays as for a pipe held open, which a native call does not (README).
 *
 * Make the other checkout with `git worktree add --detach /tmp/base <rev>`.
 */

import { join } from "node:path";
import { exec, MAIN, PERMISSION_FLAGS, START_FLAGS, V8_FLAGS } from "../_cli.ts";
import { median, millions, ms, pairedInterval, pairedRatio } from "./_stats.ts";

const MODES = ["--own-flags", "--instructions"];
const ownFlags = Deno.args.includes("--own-flags");
const instructions = Deno.args.includes("--instructions");
const [other, roundsArg] = Deno.args.filter((arg) => !MODES.includes(arg));
if (other === undefined) {
  console.error(
    "usage: deno run -A tests/bench/against.ts OTHER_CHECKOUT [ROUNDS] [--own-flags] [--instructions]",
  );
  Deno.exit(64);
}
if (instructions && !await hasValgrind()) {
  console.error("--instructions counts with valgrind, which is not installed here");
  Deno.exit(69);
}
const rounds = Number(roundsArg ?? (instructions ? 3 : 30));
const otherFlags = ownFlags
  ? JSON.parse(Deno.readTextFileSync(join(other, "deno.json"))).tasks.compile.command
    .match(/--v8-flags=\S+/g) ?? []
  : V8_FLAGS;
/** The V8 flags, single-threaded when counting. */
const counted = (v8Flags: string[]) =>
  instructions ? v8Flags.map((flag) => `${flag},--single-threaded`) : v8Flags;

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
  const flags = { this: counted(V8_FLAGS), other: counted(otherFlags) };
  // Deno keeps one compiled copy of a module, made with the flags of the run that compiled it: the
  // modules both trees load (Deno's own process and streams modules) would be compiled afresh on
  // every call. (_cli.ts has set DENO_DIR.) The other tree's flags, when they differ, get a
  // DENO_DIR of their own, the npm packages shared; counting, both do, made afresh (a cache
  // that has grown through other runs costs each lookup more).
  const shared = Deno.env.get("DENO_DIR")!;
  const ownDenoDir = (name: string) => {
    const path = join(dir, name);
    Deno.mkdirSync(path);
    Deno.symlinkSync(join(shared, "npm"), join(path, "npm"));
    return path;
  };
  const denoDirs = {
    this: instructions ? ownDenoDir("deno-this") : shared,
    other: instructions || flags.other.join(" ") !== flags.this.join(" ")
      ? ownDenoDir("deno-other")
      : shared,
  };
  /** One call: its wall time in ms, or counting (unless only warming caches), its instructions. */
  const once = async (tree: "this" | "other", args: string[], cache: string, count: boolean) => {
    const started = performance.now();
    const deno = [
      "run",
      "--quiet",
      ...PERMISSION_FLAGS,
      ...START_FLAGS,
      ...flags[tree],
      trees[tree],
      "--plugins-dir",
      plugins,
      ...args,
    ];
    const out = await new Deno.Command(count ? "valgrind" : Deno.execPath(), {
      args: count
        ? ["--tool=callgrind", "--callgrind-out-file=/dev/null", Deno.execPath(), ...deno]
        : deno,
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
    const stderr = new TextDecoder().decode(out.stderr);
    if (!out.success) throw new Error(`${trees[tree]} ${args.join(" ")}: ${stderr}`);
    if (!count) return performance.now() - started;
    const collected = stderr.match(/^==\d+== Collected : (\d+)$/m);
    if (collected === null) throw new Error(`no count from callgrind:\n${stderr}`);
    return Number(collected[1]);
  };
  const times = new Map<string, number[]>();
  // The first rounds only warm caches: tyhooks' index cache and Deno's code cache take three runs
  // to settle (counting shows a third run still doing more than the fourth).
  const warmRounds = instructions ? 3 : 2;
  for (let round = -warmRounds; round < rounds; round++) {
    for (const [call, args] of Object.entries(CALLS)) {
      // Alternate which tree goes first.
      const order = ["this", "other"] as const;
      for (const label of round % 2 ? order.toReversed() : order) {
        const took = await once(
          label,
          args,
          join(dir, `cache-${label}`),
          instructions && round >= 0,
        );
        if (round >= 0) {
          times.set(`${call}|${label}`, [...times.get(`${call}|${label}`) ?? [], took]);
        }
      }
    }
  }
  console.log(
    instructions
      ? `${rounds} rounds, interleaved; instructions executed, median and range`
      : `${rounds} rounds, interleaved; medians, and the median of each round's ratio with its 95% interval`,
  );
  console.log(`  V8 flags: this ${flags.this.join(" ")}, other ${flags.other.join(" ")}`);
  for (const call of Object.keys(CALLS)) {
    const mine = times.get(`${call}|this`)!;
    const theirs = times.get(`${call}|other`)!;
    const ratio = (median(mine) / median(theirs)).toFixed(3);
    if (instructions) {
      console.log(
        `  ${call.padEnd(16)} this ${millions(mine)}  other ${
          millions(theirs)
        }  this/other ${ratio}`,
      );
      continue;
    }
    const [low, high] = pairedInterval(mine, theirs).map((r) => r.toFixed(3));
    console.log(
      `  ${call.padEnd(16)} this ${ms(median(mine))}  other ${
        ms(median(theirs))
      }  this/other ${ratio}  paired ${pairedRatio(mine, theirs).toFixed(3)} (${low}-${high})`,
    );
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}

/** True when valgrind runs here. */
async function hasValgrind(): Promise<boolean> {
  try {
    return (await exec(["valgrind", "--version"])).code === 0;
  } catch {
    return false; // Not installed: exec cannot spawn it.
  }
}
