import { dirname, resolve } from "node:path";
import { type CommandContext, type CommandSpec, stringOption } from "./command.ts";
import { durationOption } from "./_shared.ts";
import { UsageError } from "../errors.ts";
import { readHostsFile } from "../hosts/hosts_file.ts";
import { DEFAULT_PICK_TIMEOUT_MS, pickHost } from "../hosts/pick.ts";
import { STRATEGIES, type Strategy } from "../hosts/strategy.ts";

export const spec: CommandSpec = {
  name: "pick-host",
  summary:
    'Probe every host of a hosts file at once and print a placement answer {"target","workdir","reason"}.',
  options: {
    hosts: { type: "string", value: "FILE", help: "the hosts file (required)" },
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
    "Hosts that fail, time out or print a wrong answer are dropped and logged to stderr. Ties break",
    'by name. When no host answers, the answer is local: {"target":"","workdir":"","reason":"no host',
    'answered: ..."}, exit 0. A bad hosts file line is an error naming FILE:LINE, exit 1.',
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const file = stringOption(ctx.values, "hosts");
  if (file === undefined) {
    throw new UsageError(
      'Missing flag "--hosts": the hosts file to probe',
      "hint: see tyhooks pick-host --help",
    );
  }
  const strategy = stringOption(ctx.values, "strategy") ?? "most-free-memory";
  if (!(STRATEGIES as readonly string[]).includes(strategy)) {
    throw new UsageError(
      `Invalid value "${strategy}" for flag "--strategy": expected ${STRATEGIES.join(" or ")}`,
    );
  }
  const timeoutMs = durationOption(ctx, "timeout") ?? DEFAULT_PICK_TIMEOUT_MS;
  const hosts = await readHostsFile(file);
  const { answer } = await pickHost(hosts, {
    strategy: strategy as Strategy,
    timeoutMs,
    cwd: dirname(resolve(file)),
    log: ctx.log,
    signal: ctx.signal,
  });
  await ctx.print(JSON.stringify(answer) + "\n");
  return 0;
}
