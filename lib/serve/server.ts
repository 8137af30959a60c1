/**
 * The daemon: HTTP on a unix socket or TCP under the connection limits, the endpoint table over
 * the current plugin snapshot, and the graceful stop SPEC describes.
 *
 * Over each plugin index it builds three runners. They share one process limit and differ in
 * their gate and in when the stop aborts their scripts:
 *
 * | runner   | used by                          | gate      | aborted at stop             |
 * | -------- | -------------------------------- | --------- | --------------------------- |
 * | `decide` | route, placement, tool pre       | consulted | last, after calls in flight |
 * | `act`    | actions                          | consulted | at once                     |
 * | `fire`   | events, status change, tool post | event     | at once                     |
 *
 * @module
 */

import type { PluginIndex } from "../plugins/types.ts";
import { type Logger, silentLogger } from "../log.ts";
import { Runner } from "../hooks/runner.ts";
import { DEFAULT_TIMEOUTS, type Timeouts } from "../events.ts";
import { DRAIN_MS } from "../process/run_script.ts";
import { DEFAULT_GRACE_MS } from "../process/group.ts";
import {
  bearerCheck,
  bindServer,
  type BoundServer,
  type ListenAddress,
  removeSocket,
} from "./listen.ts";
import { within } from "../async.ts";
import { DEFAULT_MAX_PROCS, EventQueue, ProcLimit } from "./limits.ts";
import { type HolderLoadOptions, IndexHolder } from "./index_holder.ts";
import { type DaemonState, requestHandler } from "./endpoints.ts";
import type { ServiceSet } from "../services/service_set.ts";
import { PersistentHooks } from "./persistent.ts";

/** Options of {@linkcode startDaemon}. */
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
  /**
   * The plugin loader; default `loadPlugins`. A loader that calls `observe` with what it reads
   * is reloaded only when one of those changes, one that does not at any change.
   */
  load?: (dir: string, options: { observe(path: string): void }) => Promise<PluginIndex>;
  /** Reload when the plugins dir changes; default true (SIGHUP and `reload()` work either way). */
  watch?: boolean;
  /** Starts the services of the first index (`--services`), e.g. with `startServices`. */
  startServices?: (index: PluginIndex) => ServiceSet | Promise<ServiceSet>;
  /** Services' SIGTERM-to-SIGKILL wait at stop; default 5 s. */
  stopTimeoutMs?: number;
}

/** A running daemon. */
export interface Daemon {
  /** Where it listens (a TCP port 0 resolved to the real port). */
  readonly address: ListenAddress;
  /** The number of plugins loaded at start. */
  readonly plugins: number;
  /** Connections served at once: `conns.maxConns`, lowered to fit the open files limit. */
  readonly maxConns: number;
  /** Reloads the plugin index (SIGHUP). */
  reload(reason?: string): Promise<void>;
  /**
   * Stops gracefully: stop accepting; terminate event and action scripts and drop queued
   * events; let consulted calls in flight finish within their deadlines; stop services; remove
   * the socket. Calling it again returns the same promise.
   */
  stop(): Promise<void>;
}

// `loadPlugins`, telling the holder what it reads (as the index cache learns it).
async function defaultLoad(dir: string, options: HolderLoadOptions): Promise<PluginIndex> {
  const { collectReports, foldReports } = await import("../plugins/load.ts");
  const collected = await collectReports(dir, options);
  return { dir: collected.root, ...foldReports(collected) };
}

/**
 * Starts the daemon and returns once it listens; a `RunError` when the address cannot be bound
 * (a live daemon or another file at the socket path, say).
 *
 * Requires `--allow-net`, `--allow-read`, `--allow-write`, `--allow-run`, `--allow-env`. Run it
 * with `--v8-flags=--optimize-for-size,--no-opt`, as the binary does, or its memory
 * grows by about 60 MB under load (lib/README.md "Daemon").
 *
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
    watch: options.watch === false ? false : undefined,
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
    // Processes of an index replaced by a reload end too, not only the current index's.
    await Promise.allSettled([
      queueClosed,
      servicesStopped,
      holder.current.built.persistent.close(),
      ...retiring,
    ]);
    if (socket !== null) await removeSocket(socket);
  };
  return {
    address: bound.address,
    plugins: holder.current.index.plugins.length,
    maxConns: server.maxConns,
    reload: (reason = "reload") => holder.reload(reason),
    stop: () => stopping ??= stop(),
  };
}

/** The runners of one snapshot. */
export interface DaemonRunners {
  /** Consulted calls: a caller waits on them within their deadline. */
  decide: Runner;
  /** Actions: a caller waits, but nothing depends on them at shutdown. */
  act: Runner;
  /** Fire-and-forget work. */
  fire: Runner;
  /** The persistent hooks' processes, asked by `decide` and told by `fire`. */
  persistent: PersistentHooks;
}

/** What the runners are built with. */
interface RunnerSettings {
  limit: ProcLimit;
  /** Aborted last at stop: terminates consulted scripts still running. */
  decideSignal: AbortSignal;
  /** Aborted first at stop: terminates event and action scripts. */
  stopSignal: AbortSignal;
  hooksDir?: string;
  log: Logger;
  timeouts?: Partial<Timeouts>;
}

/** Builds the runners over `index`. Cheap (no I/O): done once per reload. */
function buildRunners(index: PluginIndex, settings: RunnerSettings): DaemonRunners {
  const common = { hooksDir: settings.hooksDir, log: settings.log, timeouts: settings.timeouts };
  const persistent = new PersistentHooks({ log: settings.log });
  return {
    persistent,
    decide: new Runner(index, {
      ...common,
      limit: settings.limit.consulted,
      signal: settings.decideSignal,
      ask: persistent.ask,
    }),
    act: new Runner(index, {
      ...common,
      limit: settings.limit.consulted,
      signal: settings.stopSignal,
    }),
    fire: new Runner(index, {
      ...common,
      limit: settings.limit.event,
      signal: settings.stopSignal,
      notify: persistent.ask,
    }),
  };
}
