import {
  type CommandContext,
  type CommandSpec,
  durationOption,
  stringOption,
  UsageError,
} from "./types.ts";
import { hooksDir, pluginsDir } from "../paths.ts";
import { checkExposure, formatListen, parseListen, readTokenFile } from "../serve/listen.ts";
import { DEFAULT_MAX_PROCS } from "../serve/limits.ts";
import { DEFAULT_MAX_CONNS } from "../serve/conn_server.ts";
import { DEFAULT_STOP_TIMEOUT_MS } from "../services/supervisor.ts";
import { startDaemon } from "../serve/server.ts";
import { clearableTimeout } from "../async.ts";

export const spec: CommandSpec = {
  summary:
    "Run the daemon: answer route, placement, tool-call, event and action requests over HTTP.",
  options: {
    listen: {
      type: "string",
      value: "ADDR",
      help: "unix:PATH or HOST:PORT (default unix:<runtime>/tyhooks.sock)",
    },
    "token-file": {
      type: "string",
      value: "FILE",
      help: "require Authorization: Bearer <token> on every request; FILE holds the token, " +
        "mode 0600 (needed off loopback)",
    },
    services: { type: "boolean", help: "also supervise the plugins' services (as services run)" },
    "max-procs": {
      type: "string",
      value: "N",
      help: `hook processes at once (default ${DEFAULT_MAX_PROCS})`,
    },
    "max-conns": {
      type: "string",
      value: "N",
      help: `connections served at once; more are closed at once (default ${DEFAULT_MAX_CONNS})`,
    },
    "stop-timeout": {
      type: "string",
      value: "DUR",
      help:
        "at SIGINT/SIGQUIT/SIGTERM, how long running event hooks (and services) may take to end " +
        "(default 5s)",
    },
  },
  details: [
    "<runtime> is $XDG_RUNTIME_DIR, else <cache>/tyhooks. The socket is mode 0600 and removed on",
    "exit. Endpoints: GET /v1/health, /v1/plugins, /v1/services; POST /v1/route, /v1/placement,",
    "/v1/events/{event}[?wait=1], /v1/status-change, /v1/actions/{plugin}/{action}, /v1/tool/pre,",
    "/v1/tool/post, /v1/agent/{agent}[?form=command], /v1/hosts. The plugins are reloaded when a manifest, a script one names or a",
    "plugin dir changes, and on SIGHUP.",
    "A connection must send its headers within 10 s; an idle one is closed after 30 s.",
    "Events, status changes and tool post calls are written to the spool (<state>/tyhooks/spool)",
    "before the 202, and removed once their hooks have run; a full spool (10,000 events or",
    "64 MiB) answers 503. At start the daemon runs what a previous daemon left there, and the",
    "work of --detach runs that died (tyhooks spool list shows it).",
    "SIGINT/SIGQUIT/SIGTERM: stop accepting, let route/placement/tool pre calls in flight finish, give",
    "running event hooks --stop-timeout, leave the rest in the spool, stop services, remove the",
    "socket, exit 0.",
  ].join("\n"),
  handlesSignals: true,
  ownsHangup: true,
};

function countOption(ctx: CommandContext, flag: string, fallback: number): number {
  const text = stringOption(ctx.values, flag);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!/^\s*\d+\s*$/.test(text) || n < 1) {
    throw new UsageError(
      `Invalid value "${text}" for flag "--${flag}": expected a whole number of at least 1`,
    );
  }
  return n;
}

function aborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) =>
    signal.addEventListener("abort", () => resolve(), { once: true })
  );
}

export async function run(ctx: CommandContext): Promise<number> {
  const listen = parseListen(stringOption(ctx.values, "listen"));
  const tokenFile = stringOption(ctx.values, "token-file");
  const token = tokenFile === undefined ? undefined : await readTokenFile(tokenFile);
  checkExposure(listen, token);
  const maxProcs = countOption(ctx, "max-procs", DEFAULT_MAX_PROCS);
  const maxConns = countOption(ctx, "max-conns", DEFAULT_MAX_CONNS);
  const stopTimeoutMs = durationOption(ctx, "stop-timeout") ?? DEFAULT_STOP_TIMEOUT_MS;
  const daemon = await startDaemon({
    listen,
    token,
    pluginsDir: pluginsDir(ctx.globals.pluginsDir),
    hooksDir: hooksDir(ctx.globals.hooksDir),
    maxProcs,
    conns: { maxConns },
    stopTimeoutMs,
    log: ctx.log,
    startServices: ctx.values.services
      ? async (index) => {
        const { startServices } = await import("../services/service_set.ts");
        const { stderrSink } = await import("../services/line_relay.ts");
        return startServices(index, { log: ctx.log, output: stderrSink(ctx.globals.logFormat) });
      }
      : undefined,
  });
  ctx.log.log("info", `Listening on ${formatListen(daemon.address)}`, {
    plugins: daemon.plugins,
    pid: Deno.pid,
    max_procs: maxProcs,
    max_conns: daemon.maxConns,
  });
  const onHangup = () => void daemon.reload("SIGHUP");
  Deno.addSignalListener("SIGHUP", onHangup);
  const cut = new AbortController();
  const leftovers = runLeftovers(ctx, cut.signal);
  try {
    await aborted(ctx.signal);
  } finally {
    Deno.removeSignalListener("SIGHUP", onHangup);
  }
  ctx.log.log("info", "Stopping");
  const cutTimer = clearableTimeout(stopTimeoutMs);
  cutTimer.signal.addEventListener("abort", () => cut.abort(), { once: true });
  await Promise.all([daemon.stop(), leftovers]);
  cutTimer.clear();
  ctx.log.log("info", "Stopped");
  return 0;
}

/**
 * Runs, in the background, what the daemon did not take from the spool: the work of `--detach`
 * runs that died, and events a daemon of other plugins dirs accepted. `cut` ends the one
 * running at the stop timeout (it stays spooled).
 */
async function runLeftovers(ctx: CommandContext, cut: AbortSignal): Promise<void> {
  try {
    const { Spool } = await import("../spool/spool.ts");
    const { runSpooled } = await import("./spool.ts");
    await runSpooled(ctx, Spool.open(undefined, { log: ctx.log }), { cut });
  } catch (error) {
    ctx.log.log("warn", `Cannot run the spool's other events: ${(error as Error).message}`);
  }
}
