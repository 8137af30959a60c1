import type { CommandContext, CommandSpec } from "./command.ts";
import { durationOption } from "./_shared.ts";
import { RunError } from "../errors.ts";
import { UsageError } from "./command.ts";
import { clearableTimeout } from "../_timers.ts";
import { pluginsDir } from "../dirs.ts";
import { DEFAULT_SYNC_TIMEOUT_MS, describeSync, preparePayload, syncHosts } from "../hosts/sync.ts";
import { sshCommand } from "../hosts/ssh.ts";

export const spec: CommandSpec = {
  name: "hosts sync",
  summary:
    "Put tyhooks (and with --plugins the plugins dir) on each host over ssh, so it answers tyhooks probe there.",
  args: "HOST...",
  positionals: [1, 10_000],
  options: {
    plugins: { type: "boolean", help: "also copy the plugins dir (only the files that changed)" },
    timeout: {
      type: "string",
      value: "DUR",
      help: "bound on each host's whole sync (default 2m)",
    },
    json: { type: "boolean", help: "print every host's outcome as one JSON document" },
  },
  details: [
    "HOST is an ssh destination (gpu-1, user@10.0.0.7, an ssh_config alias). ssh runs with",
    "-o BatchMode=yes -o ConnectTimeout=2, after $TYHOOKS_SSH when set (ssh -F CONFIG, say).",
    "",
    "tyhooks goes to ~/.local/bin/tyhooks on the host: this binary when tyhooks is compiled; else",
    "the bundle in ~/.local/share/tyhooks/ behind a launcher with the binary's grants, plus the Deno",
    "running this tyhooks when the host has no deno of the same version. Files are compared by",
    "sha256 first, so an unchanged host is sent nothing. With --plugins, the plugins dir goes to the",
    "host's default plugins dir (~/.config/task/plugins); files removed here stay there.",
    "",
    "Then tyhooks probe runs on each host; its facts (or why it failed) are printed, one host after",
    "another. Hosts are synced at once (8 at a time). Exit 1 when any host failed. --json prints",
    '{"hosts":[...]}, each host with "host", "copied", "copied_bytes", "facts", "error",',
    '"warnings" and "duration_ms".',
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const timeoutMs = durationOption(ctx, "timeout") ?? DEFAULT_SYNC_TIMEOUT_MS;
  const hosts = [...new Set(ctx.positionals)];
  for (const host of hosts) {
    // A word starting with "-" would be read by ssh as an option.
    if (host === "" || host.startsWith("-") || /[\s\0]/.test(host)) {
      throw new UsageError(`Invalid host ${JSON.stringify(host)}: expected an ssh destination`);
    }
  }
  const ssh = sshCommand();
  const plugins = ctx.values.plugins ? pluginsDir(ctx.globals.pluginsDir) : undefined;
  // Gathering and hashing what is sent is bounded by --timeout too (a plugins dir may hold big
  // files, or a symlink to one).
  const timer = clearableTimeout(timeoutMs);
  const payload = await preparePayload({
    pluginsDir: plugins,
    signal: AbortSignal.any([ctx.signal, timer.signal]),
  }).catch((error) => {
    if (ctx.signal.aborted || !timer.signal.aborted) throw error;
    throw new RunError(`Cannot gather what to send within --timeout ${timeoutMs} ms`);
  }).finally(() => timer.clear());
  try {
    for (const skipped of payload.skipped) ctx.log.log("warn", `Plugin file not sent: ${skipped}`);
    if (plugins !== undefined && payload.plugins.length === 0) {
      ctx.log.log("warn", `No plugin files to send: "${plugins}" holds none`);
    }
    const outcomes = await syncHosts(hosts, payload, { timeoutMs, ssh, signal: ctx.signal });
    for (const outcome of outcomes) {
      for (const warning of outcome.warnings) ctx.log.log("warn", warning);
    }
    if (ctx.values.json) {
      await ctx.print(JSON.stringify({ hosts: outcomes }) + "\n");
    } else {
      await ctx.print(
        outcomes.map((outcome) =>
          describeSync(outcome) + "\n" +
          (outcome.facts ? `${outcome.host}: ${JSON.stringify(outcome.facts)}\n` : "")
        ).join(""),
      );
    }
    return outcomes.some((outcome) => outcome.error !== null) ? 1 : 0;
  } finally {
    await Deno.remove(payload.scratch, { recursive: true }).catch(() => {});
  }
}
