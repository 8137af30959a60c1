/**
 * The daemon: HTTP on a unix socket or TCP under the connection limits, the endpoint table over the current plugin
 * snapshot, and the graceful stop SPEC describes.
 *
 * @module
 */

import type { PluginIndex } from "../plugins/types.ts";
import { type Logger, silentLogger } from "../log.ts";
import { DEFAULT_TIMEOUTS, type Timeouts } from "../hooks/runner.ts";
import { DEFAULT_GRACE_MS, DRAIN_MS } from "../process/run_script.ts";
import type { ListenAddress } from "./listen.ts";
import { bearerCheck } from "./auth.ts";
import { removeSocket } from "./unix_socket.ts";
import { within } from "../_timers.ts";
import { bindServer, type BoundServer } from "./bind_server.ts";
import { DEFAULT_MAX_PROCS, EventQueue, ProcLimit } from "./limits.ts";
import { IndexHolder, type WatchDirOptions } from "./index_holder.ts";
import { buildRunners } from "./runners.ts";
import { type DaemonState, requestHandler, type ServiceSupervisor } from "./endpoints.ts";

/**
 * Options of {@linkcode startDaemon}.
 *
 * @example
 * ```ts
 * import { type DaemonOptions, startDaemon } from "./server.ts";
 * const dir = await Deno.makeTempDir();
 * const options: DaemonOptions = {
 *   listen: { transport: "tcp", hostname: "127.0.0.1", port: 0 },
 *   pluginsDir: dir,
 *   maxProcs: 8,
 *   timeouts: { placement: 2000 },
 *   watch: false,
 * };
 * const daemon = await startDaemon(options);
 * console.assert(daemon.address.transport === "tcp" && daemon.address.port !== 0);
 * await daemon.stop();
 * ```
 */
export interface DaemonOptions {
  /** Where to listen: a unix socket (created mode 0600) or a TCP address. */
  listen: ListenAddress;
  /** Required bearer token; none = no check (see `checkExposure`). */
  token?: string;
  /** The plugins dir, loaded at start and reloaded when it changes or on SIGHUP. */
  pluginsDir: string;
  /** Legacy hooks dir for events. */
  hooksDir?: string;
  /** Hook processes at once; default 64. */
  maxProcs?: number;
  /** Waiting fire-and-forget jobs at most; default 10,000. */
  maxQueuedEvents?: number;
  /** Bytes of request bodies that waiting and running fire-and-forget jobs hold; default 64 MiB. */
  maxQueuedBytes?: number;
  /** Connections at once (default 256), and the header and idle timeouts (10 s, 30 s). */
  conns?: { maxConns?: number; headersTimeoutMs?: number; idleTimeoutMs?: number };
  /** Per-call timeouts; defaults from SPEC. */
  timeouts?: Partial<Timeouts>;
  /** Where requests, reloads and failures are logged; default silent. */
  log?: Logger;
  /** The plugin loader; default `loadPlugins`. */
  load?: (dir: string) => Promise<PluginIndex>;
  /** Plugins dir watch settings, or false for none. */
  watch?: WatchDirOptions | false;
  /** Starts the service supervisor over the first index (`--services`). */
  startServices?: (index: PluginIndex) => ServiceSupervisor | Promise<ServiceSupervisor>;
  /** Services' SIGTERM-to-SIGKILL wait at stop; default 5 s. */
  stopTimeoutMs?: number;
}

/**
 * A running daemon.
 *
 * @example
 * ```ts
 * import { type Daemon, startDaemon } from "./server.ts";
 * const dir = await Deno.makeTempDir();
 * const daemon: Daemon = await startDaemon({
 *   listen: { transport: "unix", path: `${dir}/tyhooks.sock` },
 *   pluginsDir: dir,
 *   watch: false,
 * });
 * console.assert(daemon.plugins === 0);
 * await daemon.reload("example");
 * await daemon.stop();
 * ```
 */
export interface Daemon {
  /** Where it listens (a TCP port 0 resolved to the real port). */
  readonly address: ListenAddress;
  /** The number of plugins loaded at start. */
  readonly plugins: number;
  /** Reloads the plugin index (SIGHUP). */
  reload(reason?: string): Promise<void>;
  /**
   * Stops gracefully: stop accepting; terminate event and action scripts and drop queued
   * events; let consulted calls in flight finish within their deadlines; stop services; remove
   * the socket. Calling it again returns the same promise.
   */
  stop(): Promise<void>;
}

async function defaultLoad(dir: string): Promise<PluginIndex> {
  const { loadPlugins } = await import("../plugins/load.ts");
  return await loadPlugins(dir);
}

/**
 * Starts the daemon and returns once it listens.
 *
 * Requires `--allow-net`, `--allow-read`, `--allow-write`, `--allow-run`, `--allow-env`. Run it
 * with `--v8-flags=--optimize-for-size,--no-opt,--no-maglev`, as the binary does, or its memory grows by
 * about 60 MB under load (README "Daemon").
 *
 * @param options Address, token, plugins dir, limits, logger.
 * @returns The daemon.
 * @throws {RunError} When the socket path holds a live daemon or another file.
 * @example
 * ```ts
 * import { startDaemon } from "./server.ts";
 * const dir = await Deno.makeTempDir();
 * const daemon = await startDaemon({
 *   listen: { transport: "unix", path: `${dir}/t.sock` },
 *   pluginsDir: dir,
 *   load: (d) => Promise.resolve({ dir: d, plugins: [], warnings: [] }),
 * });
 * await daemon.stop();
 * ```
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  const log = options.log ?? silentLogger;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const limit = new ProcLimit(options.maxProcs ?? DEFAULT_MAX_PROCS);
  const decideAbort = new AbortController();
  const stopAbort = new AbortController();
  const retiring = new Set<Promise<void>>();
  const holder = new IndexHolder(options.pluginsDir, {
    load: options.load ?? defaultLoad,
    log,
    watch: options.watch,
    build: (index) =>
      buildRunners(index, {
        limit,
        decideSignal: decideAbort.signal,
        stopSignal: stopAbort.signal,
        hooksDir: options.hooksDir,
        log,
        // Only the timeouts given: a hook's own `timeout` setting applies where none is.
        timeouts: options.timeouts,
      }),
    // A reload ends the previous index's persistent processes once their requests are answered.
    retire: (built) => {
      const retired = built.persistent.retire();
      retiring.add(retired);
      retired.finally(() => retiring.delete(retired));
    },
  });
  await holder.start();
  const state: DaemonState = {
    holder,
    events: new EventQueue({
      maxPending: options.maxQueuedEvents,
      maxBytes: options.maxQueuedBytes,
      maxActive: limit.eventMax,
      log,
    }),
    services: null,
    stopping: false,
    startedAt: performance.now(),
    log,
  };
  const handle = requestHandler(state, {
    check: options.token === undefined ? null : bearerCheck(options.token),
    log,
  });
  let bound: BoundServer | undefined;
  try {
    bound = await bindServer(options.listen, handle, { ...options.conns, log });
    if (options.startServices) state.services = await options.startServices(holder.current.index);
  } catch (error) {
    holder.close();
    await bound?.server.shutdown();
    if (bound?.socket) await removeSocket(bound.socket);
    throw error;
  }
  const { server, socket } = bound;

  // The longest a consulted call may still take: its deadline, the kill and the drain.
  const consultedBoundMs = Math.max(timeouts.route, timeouts.placement, timeouts.tool) +
    DEFAULT_GRACE_MS + DRAIN_MS;
  let stopping: Promise<void> | undefined;
  const stop = async () => {
    state.stopping = true;
    holder.close();
    stopAbort.abort();
    const queueClosed = state.events.close();
    const servicesStopped = state.services?.stop({ stopTimeoutMs: options.stopTimeoutMs ?? 5000 });
    // shutdown() stops accepting at once and resolves when the requests in flight are answered.
    const drained = server.shutdown();
    await within(drained, consultedBoundMs + 1000);
    decideAbort.abort();
    await within(drained, 1000);
    await Promise.allSettled([
      queueClosed,
      servicesStopped,
      holder.current.built.persistent.close(),
    ]);
    if (socket !== null) await removeSocket(socket);
  };
  return {
    address: bound.address,
    plugins: holder.current.index.plugins.length,
    reload: (reason = "reload") => holder.reload(reason),
    stop: () => stopping ??= stop(),
  };
}
