/**
 * The npm-installed tyhooks against `deno task cli` (`deno run -q -P=tyhooks` with the V8 flags,
 * on `main.ts`) and the single-file bundle of `deno task bundle`, interleaved in one run:
 * `deno run -A tests/bench/npm.ts [ROUNDS]`. Warm `route` (index cached) and warm
 * `agent claude` (a PreToolUse, no daemon) with one guard, each variant its own index cache; medians, and the ratio to
 * `deno task cli`. The package is built, packed and installed into a temp prefix first, as README
 * "Install" says, taking `deno` from npm's cache.
 */

import { join } from "node:path";
import { MAIN, PERMISSION_FLAGS, ROOT, START_FLAGS, V8_FLAGS, writeTree } from "../_cli.ts";
import { installNpmPackage } from "../_npm.ts";
import { median, ms, ratio } from "./_stats.ts";

const TICKS_PER_S = 100; // USER_HZ: what /proc counts CPU time in, 100 on Linux.

/** CPU time (ms) of this process's waited-for children so far, from /proc (Linux). */
function childrenCpuMs(): number {
  const stat = Deno.readTextFileSync("/proc/self/stat");
  // After the command name in parentheses: fields 3 on; cutime and cstime are fields 16 and 17.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[13]) + Number(fields[14])) * 1000 / TICKS_PER_S;
}

const rounds = Number(Deno.args[0] ?? 30);
const dir = await Deno.makeTempDir({ prefix: "tyhooks-bench-npm-" });
try {
  const { prefix } = await installNpmPackage(dir);
  const bundle = join(dir, "tyhooks.js");
  const built = await new Deno.Command(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform", "deno", "--output", bundle, MAIN],
    cwd: ROOT,
    stdout: "null",
  }).output();
  if (!built.success) throw new Error("deno bundle failed");
  const plugins = join(dir, "plugins");
  await writeTree(plugins, {
    "router/plugin.yaml": "name: router\nhooks:\n  task.route: h.sh\n",
    "router/h.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/p/work\n",
    "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: h.sh\n",
    "guard/h.sh": "#!/bin/sh\nexit 0\n",
  });

  const deno = Deno.execPath();
  const variants: Record<string, string[]> = {
    "npm-installed": [join(prefix, "bin", "tyhooks")],
    "deno task cli": [deno, "run", "-q", "-P=tyhooks", ...START_FLAGS, ...V8_FLAGS, MAIN],
    "single bundle": [deno, "run", "-q", "--no-config", ...PERMISSION_FLAGS, ...V8_FLAGS, bundle],
  };
  const claude = JSON.stringify({
    session_id: "bench",
    hook_event_name: "PreToolUse",
    tool_name: "Bash",
    tool_input: { command: "ls" },
    cwd: dir,
  });
  const calls: Record<string, { args: string[]; stdin?: string }> = {
    "route (warm)": { args: ["route", "--plugins-dir", plugins, "--task-json", '{"id":1}'] },
    "agent claude (warm)": {
      args: ["agent", "claude", "--plugins-dir", plugins],
      stdin: claude,
    },
  };

  const once = async (variant: string, call: { args: string[]; stdin?: string }) => {
    const cmd = variants[variant];
    const cpuBefore = childrenCpuMs();
    const started = performance.now();
    const child = new Deno.Command(cmd[0], {
      args: [...cmd.slice(1), ...call.args],
      cwd: ROOT,
      env: { XDG_CACHE_HOME: join(dir, `cache-${variant.replaceAll(" ", "-")}`), NO_COLOR: "1" },
      stdin: "piped",
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(call.stdin ?? ""));
    await writer.close();
    const out = await child.output();
    const took = performance.now() - started;
    if (!out.success) {
      throw new Error(`${variant} ${call.args[0]}: ${new TextDecoder().decode(out.stderr)}`);
    }
    return { took, cpu: childrenCpuMs() - cpuBefore };
  };

  const times = new Map<string, number[]>();
  const cpu = new Map<string, number>();
  const names = Object.keys(variants);
  for (let round = -2; round < rounds; round++) {
    for (const [label, call] of Object.entries(calls)) {
      // Each variant takes each place in the order in turn; the first two rounds only warm caches.
      const shift = ((round % names.length) + names.length) % names.length;
      for (const variant of [...names.slice(shift), ...names.slice(0, shift)]) {
        const { took, cpu: used } = await once(variant, call);
        if (round < 0) continue;
        const key = `${label}|${variant}`;
        times.set(key, [...times.get(key) ?? [], took]);
        cpu.set(key, (cpu.get(key) ?? 0) + used);
      }
    }
  }
  console.log(
    `${rounds} rounds, interleaved; median wall time and mean CPU (user + system, the call's ` +
      "processes), each with its ratio to deno task cli",
  );
  for (const label of Object.keys(calls)) {
    const base = median(times.get(`${label}|deno task cli`)!);
    const baseCpu = cpu.get(`${label}|deno task cli`)!;
    for (const variant of names) {
      const key = `${label}|${variant}`;
      const wall = median(times.get(key)!);
      const used = cpu.get(key)!;
      console.log(
        `  ${label.padEnd(25)} ${variant.padEnd(14)} ${ms(wall)} ${ratio(wall, base)}` +
          `  CPU ${ms(used / rounds)} ${ratio(used, baseCpu)}`,
      );
    }
  }
} finally {
  await Deno.remove(dir, { recursive: true });
}
