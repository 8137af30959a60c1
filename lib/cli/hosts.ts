/**
 * The agent-host commands: `probe` (this host's facts), `pick-host` (probe hosts and choose one)
 * and `hosts sync` (put tyhooks on hosts over ssh). Each loads its part of lib/hosts/ only when
 * it runs: `probe` is what a control host waits for.
 *
 * @module
 */

import { dirname, pluginsDir, resolve } from "../paths.ts";
import {
  type CommandContext,
  type CommandModule,
  durationOption,
  stringOption,
  UsageError,
} from "./types.ts";
import { makeRunner, TASK_OPTIONS, taskOrEmpty } from "./runner.ts";
import { RunError } from "../errors.ts";
import { clearableTimeout } from "../async.ts";
import type { HostEntry } from "../hosts/hosts_file.ts";
import type { Strategy } from "../hosts/pick.ts";
import { escapeControl, hasControl, jsonText, quoted } from "../text.ts";

export const probe: CommandModule = {
  spec: {
    summary: "Print this host's facts as one JSON object, for pick-host on a control host.",
    options: {
      workdir: {
        type: "string",
        value: "DIR",
        help: "report free disk of DIR (default $HOME)",
      },
    },
    details: [
      'Fields: "hostname", "os", "arch", "cpus", "load_avg" [1, 5, 15 min], "mem_total_bytes",',
      '"mem_available_bytes", "disk_free_bytes", "uptime_s", "version". When free disk cannot be',
      "measured (no df, a missing DIR) it is 0 and a warning goes to stderr.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const { probeHost } = await import("../hosts/probe.ts");
    const facts = await probeHost({
      workdir: stringOption(ctx.values, "workdir"),
      log: ctx.log,
      signal: ctx.signal,
    });
    await ctx.print(jsonText(facts));
    return 0;
  },
};

export const pickHost: CommandModule = {
  spec: {
    summary:
      'Probe every host of a hosts file (or of the task.hosts handlers) at once and print a placement answer {"target","workdir","reason"}.',
    options: {
      hosts: { type: "string", value: "FILE", help: "the hosts file" },
      "from-hosts-hook": {
        type: "boolean",
        help: "take the candidates from the task.hosts handlers instead of a hosts file",
      },
      ...TASK_OPTIONS,
      strategy: {
        type: "string",
        value: "S",
        help: "most-free-memory (default) or least-loaded (1-min load per cpu)",
      },
      timeout: {
        type: "string",
        value: "DUR",
        help: "bound on the whole call (default 3s); slower hosts are dropped",
      },
    },
    details: [
      "Hosts file: one host a line, NAME [WORKDIR] [-- PROBE COMMAND]; # comments and blank lines",
      'are skipped. The default probe is "ssh -o BatchMode=yes -o ConnectTimeout=2 NAME tyhooks',
      'probe", where "ssh" is $TYHOOKS_SSH when set, split into words as a shell does ("ssh -F',
      'CONFIG", say). A command after -- runs with "sh -c", from the hosts file\'s directory.',
      "",
      "--from-hosts-hook [--task FILE|--task-json JSON] asks the task.hosts handlers (as tyhooks",
      "hosts does) instead: each candidate is probed with the default probe of its target, and its",
      "workdir is kept.",
      "",
      "Hosts that fail, time out or print a wrong answer are dropped and logged to stderr. Ties break",
      'by name. When no host answers, the answer is local: {"target":"","workdir":"","reason":"no host',
      'answered: ..."}, exit 0. A bad hosts file line is an error naming FILE:LINE, exit 1.',
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const file = stringOption(ctx.values, "hosts");
    const fromHook = ctx.values["from-hosts-hook"] === true;
    if (file === undefined && !fromHook) {
      throw new UsageError(
        'Missing flag "--hosts": the hosts file to probe',
        "hint: or --from-hosts-hook to ask the task.hosts handlers; see tyhooks pick-host --help",
      );
    }
    if (file !== undefined && fromHook) {
      throw new UsageError('Flags "--hosts" and "--from-hosts-hook" cannot be used together');
    }
    const { DEFAULT_PICK_TIMEOUT_MS, pickHost, STRATEGIES } = await import("../hosts/pick.ts");
    const { readHostsFile } = await import("../hosts/hosts_file.ts");
    const strategy = stringOption(ctx.values, "strategy") ?? "most-free-memory";
    if (!(STRATEGIES as readonly string[]).includes(strategy)) {
      throw new UsageError(
        `Invalid value "${strategy}" for flag "--strategy": expected ${STRATEGIES.join(" or ")}`,
      );
    }
    const timeoutMs = durationOption(ctx, "timeout") ?? DEFAULT_PICK_TIMEOUT_MS;
    const started = performance.now();
    const hosts = file === undefined
      ? await hookCandidates(ctx, timeoutMs)
      : await readHostsFile(file);
    const { answer } = await pickHost(hosts, {
      strategy: strategy as Strategy,
      // The hosts question and the probes share the call's bound.
      timeoutMs: file === undefined
        ? Math.max(Math.round(timeoutMs - (performance.now() - started)), MIN_PROBE_MS)
        : timeoutMs,
      cwd: file === undefined ? Deno.cwd() : dirname(resolve(file)),
      log: ctx.log,
      signal: ctx.signal,
    });
    await ctx.print(jsonText(answer));
    return 0;
  },
};

export const sync: CommandModule = {
  spec: {
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
      '"-o BatchMode=yes -o ConnectTimeout=2", after $TYHOOKS_SSH when set ("ssh -F CONFIG", say).',
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
  },
  async run(ctx: CommandContext): Promise<number> {
    const { DEFAULT_SYNC_TIMEOUT_MS, describeSync, syncHosts } = await import("../hosts/sync.ts");
    const { preparePayload } = await import("../hosts/payload.ts");
    const { sshCommand } = await import("../hosts/ssh.ts");
    const timeoutMs = durationOption(ctx, "timeout") ?? DEFAULT_SYNC_TIMEOUT_MS;
    const hosts = [...new Set(ctx.positionals)];
    for (const host of hosts) {
      // A word starting with "-" would be read by ssh as an option; a control character would
      // reach the terminal in every line naming the host.
      if (host === "" || host.startsWith("-") || /\s/.test(host) || hasControl(host)) {
        throw new UsageError(`Invalid host ${quoted(host)}: expected an ssh destination`);
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
      for (const skipped of payload.skipped) {
        ctx.log.log("warn", `Plugin file not sent: ${skipped}`);
      }
      if (plugins !== undefined && payload.plugins.length === 0) {
        ctx.log.log("warn", `No plugin files to send: "${plugins}" holds none`);
      }
      const outcomes = await syncHosts(hosts, payload, { timeoutMs, ssh, signal: ctx.signal });
      for (const outcome of outcomes) {
        for (const warning of outcome.warnings) ctx.log.log("warn", warning);
      }
      if (ctx.values.json) {
        await ctx.print(jsonText({ hosts: outcomes }));
      } else {
        // What a host or its ssh said is escaped: it may hold a terminal's escape sequences.
        await ctx.print(
          outcomes.map((outcome) =>
            escapeControl(describeSync(outcome)) + "\n" +
            (outcome.facts ? `${outcome.host}: ${jsonText(outcome.facts)}` : "")
          ).join(""),
        );
      }
      return outcomes.some((outcome) => outcome.error !== null) ? 1 : 0;
    } finally {
      await Deno.remove(payload.scratch, { recursive: true }).catch(() => {});
    }
  },
};

/** The least the probes get after the hosts question, so that a slow handler leaves them room. */
const MIN_PROBE_MS = 500;

// The task.hosts handlers' candidates as hosts to probe: the default probe of each target.
async function hookCandidates(ctx: CommandContext, timeoutMs: number): Promise<HostEntry[]> {
  const runner = await makeRunner(ctx);
  const { hosts } = await runner.listHosts(await taskOrEmpty(ctx), { deadlineMs: timeoutMs });
  const { defaultProbe } = await import("../hosts/hosts_file.ts");
  return hosts.flatMap(({ target, workdir }): HostEntry[] => {
    // A target is an ssh destination on ssh's command line: one starting with "-" would be
    // read as an option.
    if (!target.startsWith("-")) {
      return [{ name: target, workdir, probe: defaultProbe(target), line: 0 }];
    }
    ctx.log.log("warn", `Host "${target}" skipped: a target may not start with "-"`);
    return [];
  });
}
