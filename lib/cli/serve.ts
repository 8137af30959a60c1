import { type CommandContext, type CommandSpec, stringOption, UsageError } from "./types.ts";
import { hooksDir, pluginsDir } from "../dirs.ts";
import { checkExposure, formatListen, parseListen, readTokenFile } from "../serve/listen.ts";
import { DEFAULT_MAX_PROCS } from "../serve/limits.ts";
import { DEFAULT_MAX_CONNS } from "../serve/conn_server.ts";
import { startDaemon } from "../serve/server.ts";

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
  },
  details: [
    "<runtime> is $XDG_RUNTIME_DIR, else <cache>/tyhooks. The socket is mode 0600 and removed on",
    "exit. Endpoints: GET /v1/health, /v1/plugins, /v1/services; POST /v1/route, /v1/placement,",
    "/v1/events/{event}[?wait=1], /v1/status-change, /v1/actions/{plugin}/{action}, /v1/tool/pre,",
    "/v1/tool/post, /v1/hosts. The plugins are reloaded when a manifest, a script one names or a",
    "plugin dir changes, and on SIGHUP.",
    "A connection must send its headers within 10 s; an idle one is closed after 30 s.",
    "SIGINT/SIGTERM: stop accepting, let route/placement/tool pre calls in flight finish, stop",
    "every hook and service, remove the socket, exit 0.",
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
  const daemon = await startDaemon({
    listen,
    token,
    pluginsDir: pluginsDir(ctx.globals.pluginsDir),
    hooksDir: hooksDir(ctx.globals.hooksDir),
    maxProcs,
    conns: { maxConns },
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
  try {
    await aborted(ctx.signal);
  } finally {
    Deno.removeSignalListener("SIGHUP", onHangup);
  }
  ctx.log.log("info", "Stopping");
  await daemon.stop();
  ctx.log.log("info", "Stopped");
  return 0;
}
