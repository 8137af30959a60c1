import { dirname, resolve } from "../_path.ts";
import { type CommandContext, type CommandSpec, stringOption, TASK_OPTIONS } from "./command.ts";
import { durationOption, makeRunner, taskOrEmpty } from "./_shared.ts";
import { UsageError } from "./command.ts";
import { defaultProbe, type HostEntry, readHostsFile } from "../hosts/hosts_file.ts";
import { DEFAULT_PICK_TIMEOUT_MS, pickHost, STRATEGIES, type Strategy } from "../hosts/pick.ts";

export const spec: CommandSpec = {
  name: "pick-host",
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
    "are skipped. The default probe is: ssh -o BatchMode=yes -o ConnectTimeout=2 NAME tyhooks probe,",
    'where "ssh" is $TYHOOKS_SSH when set, split into words as a shell does (ssh -F CONFIG, say).',
    "A command after -- runs with sh -c, from the hosts file's directory.",
    "",
    "--from-hosts-hook [--task FILE|--task-json JSON] asks the task.hosts handlers (as tyhooks",
    "hosts does) instead: each candidate is probed with the default probe of its target, and its",
    "workdir is kept.",
    "",
    "Hosts that fail, time out or print a wrong answer are dropped and logged to stderr. Ties break",
    'by name. When no host answers, the answer is local: {"target":"","workdir":"","reason":"no host',
    'answered: ..."}, exit 0. A bad hosts file line is an error naming FILE:LINE, exit 1.',
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
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
  await ctx.print(JSON.stringify(answer) + "\n");
  return 0;
}

/** The least the probes get after the hosts question, so that a slow handler leaves them room. */
const MIN_PROBE_MS = 500;

// The task.hosts handlers' candidates as hosts to probe: the default probe of each target.
async function hookCandidates(ctx: CommandContext, timeoutMs: number): Promise<HostEntry[]> {
  const runner = await makeRunner(ctx);
  const { hosts } = await runner.listHosts(await taskOrEmpty(ctx), { deadlineMs: timeoutMs });
  const entries: HostEntry[] = [];
  for (const host of hosts) {
    // A target is an ssh destination on ssh's command line: one starting with "-" would be
    // read as an option.
    if (host.target.startsWith("-")) {
      ctx.log.log("warn", `Host "${host.target}" skipped: a target may not start with "-"`);
      continue;
    }
    entries.push({
      name: host.target,
      workdir: host.workdir,
      probe: defaultProbe(host.target),
      line: 0,
    });
  }
  return entries;
}
