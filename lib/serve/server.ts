/**
 * The daemon (lib/README.md, Daemon). Over each plugin index it builds three runners that share
 * one process limit and differ in their gate and in when the stop aborts their scripts:
 *
 * | runner   | used by                          | gate      | aborted at stop             |
 * | -------- | -------------------------------- | --------- | --------------------------- |
 * | `decide` | route, placement, tool pre       | consulted | last, after calls in flight |
 * | `act`    | actions                          | consulted | at once                     |
 * | `fire`   | events, status change, tool post | event     | after `stopTimeoutMs`       |
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
  checkExposure,
  fromBrowser,
  type ListenAddress,
  removeSocket,
} from "./listen.ts";
import { checkDuration, within } from "../async.ts";
import { DEFAULT_MAX_PROCS, EventQueue, ProcLimit } from "./limits.ts";
import { type HolderLoadOptions, IndexHolder } from "./index_holder.ts";
import { type DaemonRunners, type DaemonState, requestHandler, requeue } from "./endpoints.ts";
import type { ServiceSet } from "../services/service_set.ts";
import { Spool } from "../spool/spool.ts";
import { resolve } from "../paths.ts";
import { PersistentHooks } from "./persistent.ts";

/** Options of {@linkcode startDaemon}. */
export interface DaemonOptions {
  /** Where to listen: a unix socket (created mode 0600) or a TCP address. */
  listen: ListenAddress;
  /** Required bearer token; none = no check, which only a unix socket or loopback TCP may have. */
  token?: string;
  /** The plugins dir, loaded at start and reloaded when it changes or on SIGHUP. */
  pluginsDir: string;
  /** Legacy hooks dir for events. */
  hooksDir?: string;
  /** Hook processes at once; default 64. */
  maxProcs?: number;
  /**
   * Where accepted events are kept until they have run; default `<state>/tyhooks/spool`
   * (`spoolDir()`). Made mode 0700; one another user could write is refused.
   */
  spoolDir?: string;
  /** Events accepted and not yet run, at most (the spool's entries); default 10,000. */
  maxQueuedEvents?: number;
  /** Bytes the spool holds for them at most; default 64 MiB. */
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
  /**
   * At stop, how long running event hooks may still take before they are cut (their events stay
   * spooled), and the services' SIGTERM-to-SIGKILL wait; default 5 s.
   */
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
  /** Stops gracefully, in lib/README.md's "Stopping" order; again returns the same promise. */
  stop(): Promise<void>;
}

// `loadPlugins`, telling the holder what it reads (as the index cache learns it).
async function defaultLoad(dir: string, options: HolderLoadOptions): Promise<PluginIndex> {
  const { collectReports, foldReports } = await import("../plugins/load.ts");
  const collected = await collectReports(dir, options);
  return { dir: collected.root, ...foldReports(collected) };
}

/**
 * Starts the daemon and returns once it listens, the events a previous daemon left in the spool
 * queued first; a `RunError` when the address cannot be bound (a live daemon or another file at
 * the socket path, say) or the spool cannot be used.
 *
 * Requires `--allow-net`, `--allow-read`, `--allow-write`, `--allow-run`, `--allow-env`, and
 * `--allow-sys` (the user id the spool's owner is checked against). Run it with
 * `--v8-flags=--optimize-for-size,--no-opt,--no-lazy`, as the binary does: without the first two
 * its memory grows by about 60 MB under load (lib/README.md "Daemon"); the third makes starts
 * cheaper, at about 3 MB (lib/README.md "Startup and the index cache").
 *
 * @example
 * ```ts
 * import { startDaemon } from "./server.ts";
 * const dir = await Deno.makeTempDir();
 * const daemon = await startDaemon({
 *   listen: { transport: "unix", path: `${dir}/t.sock` },
 *   pluginsDir: dir,
 *   spoolDir: `${dir}/spool`,
 *   load: (d) => Promise.resolve({ dir: d, plugins: [], warnings: [] }),
 * });
 * await daemon.stop();
 * ```
 */
export async function startDaemon(options: DaemonOptions): Promise<Daemon> {
  checkOptions(options);
  const log = options.log ?? silentLogger;
  const limit = new ProcLimit(options.maxProcs ?? DEFAULT_MAX_PROCS);
  const aborts: StopAborts = {
    decide: new AbortController(),
    stop: new AbortController(),
    cut: new AbortController(),
  };
  const retiring = new Set<Promise<void>>();
  const holder = openHolder(options, { limit, aborts, retiring, log });
  await holder.start();
  const state = openState(options, { holder, limit, cut: aborts.cut.signal, log });
  // Before listening: what a previous daemon left runs ahead of anything new.
  try {
    await resume(state);
  } catch (error) {
    // What could not be claimed stays on disk for the next start or `spool run`.
    log.log("warn", `Cannot run what the spool holds: ${(error as Error).message}`, {
      spool: state.spool.dir,
    });
  }
  const bound = await listen(state, options);
  let stopping: Promise<void> | undefined;
  return {
    address: bound.address,
    plugins: holder.current.index.plugins.length,
    maxConns: bound.server.maxConns,
    reload: (reason = "reload") => holder.reload(reason),
    stop: () => stopping ??= stop({ state, bound, aborts, retiring, options }),
  };
}

/** What the stop aborts, in order (the module's table): actions, then events, decisions last. */
interface StopAborts {
  decide: AbortController;
  stop: AbortController;
  cut: AbortController;
}

/** The plugin index holder, building the runners over each index it loads. */
function openHolder(
  options: DaemonOptions,
  { limit, aborts, retiring, log }: {
    limit: ProcLimit;
    aborts: StopAborts;
    retiring: Set<Promise<void>>;
    log: Logger;
  },
): IndexHolder<DaemonRunners> {
  return new IndexHolder(options.pluginsDir, {
    load: options.load ?? defaultLoad,
    log,
    watch: options.watch === false ? false : undefined,
    build: (index) => buildRunners(index, { options, limit, aborts, log }),
    // A reload ends the previous index's persistent processes once their requests are answered.
    retire: (built) => {
      const retired = built.persistent.retire();
      retiring.add(retired);
      retired.finally(() => retiring.delete(retired));
    },
  });
}

/** Opens the spool (closing `holder` when it cannot) and gathers what the endpoints share. */
function openState(
  options: DaemonOptions,
  { holder, limit, cut, log }: {
    holder: IndexHolder<DaemonRunners>;
    limit: ProcLimit;
    cut: AbortSignal;
    log: Logger;
  },
): DaemonState {
  let spool: Spool;
  try {
    spool = Spool.open(options.spoolDir, {
      maxEntries: options.maxQueuedEvents,
      maxBytes: options.maxQueuedBytes,
      log,
    });
  } catch (error) {
    holder.close();
    throw error;
  }
  return {
    holder,
    events: new EventQueue({ maxActive: limit.eventMax }),
    spool,
    cut,
    dirs: {
      plugins_dir: resolve(options.pluginsDir),
      hooks_dir: options.hooksDir === undefined ? null : resolve(options.hooksDir),
    },
    services: null,
    stopping: false,
    startedAt: performance.now(),
    log,
  };
}

/** Listens and starts the services; when either fails, closes all that was opened. */
async function listen(state: DaemonState, options: DaemonOptions): Promise<BoundServer> {
  const handle = requestHandler(state, {
    check: options.token === undefined ? null : bearerCheck(options.token),
    fromBrowser: fromBrowser(options.listen),
    log: state.log,
  });
  let bound: BoundServer | undefined;
  try {
    bound = await bindServer(options.listen, handle, { ...options.conns, log: state.log });
    if (options.startServices) {
      state.services = await options.startServices(state.holder.current.index);
    }
    return bound;
  } catch (error) {
    state.holder.close();
    state.events.close();
    await state.spool.close();
    await bound?.server.shutdown();
    if (bound?.socket) await removeSocket(bound.socket);
    throw error;
  }
}

/** The graceful stop {@linkcode Daemon.stop} describes. */
async function stop(
  { state, bound, aborts, retiring, options }: {
    state: DaemonState;
    bound: BoundServer;
    aborts: StopAborts;
    retiring: Set<Promise<void>>;
    options: DaemonOptions;
  },
): Promise<void> {
  const { holder, spool, log } = state;
  const stopTimeoutMs = options.stopTimeoutMs ?? 5000;
  const timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  // The longest a consulted call may still take: its deadline, the kill and the drain.
  const consultedBoundMs = Math.max(timeouts.route, timeouts.placement, timeouts.tool) +
    DEFAULT_GRACE_MS + DRAIN_MS;
  state.stopping = true;
  holder.close();
  aborts.stop.abort();
  const queue = state.events.close();
  if (queue.left > 0) {
    log.log("info", "Events not run yet stay in the spool for the next start", {
      events: queue.left,
      spool: spool.dir,
    });
  }
  const servicesStopped = state.services?.stop({ stopTimeoutMs });
  // Event hooks running get the stop timeout to finish; those cut then run again next start.
  const cut = within(queue.settled, stopTimeoutMs).then(() => aborts.cut.abort());
  // shutdown() stops accepting at once and resolves when the requests in flight are answered.
  const drained = bound.server.shutdown();
  await within(drained, consultedBoundMs + 1000);
  aborts.decide.abort();
  await within(drained, 1000);
  // Processes of an index replaced by a reload end too, not only the current index's.
  await Promise.allSettled([
    cut,
    queue.settled,
    servicesStopped,
    holder.current.built.persistent.close(),
    ...retiring,
  ]);
  await spool.close();
  if (bound.socket !== null) await removeSocket(bound.socket);
}

/** Builds the runners over `index`. Cheap (no I/O): done once per reload. */
function buildRunners(
  index: PluginIndex,
  { options, limit, aborts, log }: {
    options: DaemonOptions;
    limit: ProcLimit;
    aborts: StopAborts;
    log: Logger;
  },
): DaemonRunners {
  // Only the timeouts given: a hook's own `timeout` setting applies where none is.
  const common = { hooksDir: options.hooksDir, log, timeouts: options.timeouts };
  const persistent = new PersistentHooks({ log, maxProcs: limit.max });
  return {
    persistent,
    decide: new Runner(index, {
      ...common,
      limit: limit.consulted,
      signal: aborts.decide.signal,
      ask: persistent.ask,
    }),
    act: new Runner(index, { ...common, limit: limit.consulted, signal: aborts.stop.signal }),
    fire: new Runner(index, {
      ...common,
      limit: limit.event,
      signal: aborts.cut.signal,
      notify: persistent.ask,
    }),
  };
}

/**
 * Queues what a previous daemon left in the spool for the same dirs, in acceptance order; the
 * rest (`--detach` work, other dirs) is for the `spool run` that `serve` runs beside the daemon.
 */
async function resume(state: DaemonState): Promise<void> {
  const { spool, dirs, log } = state;
  const found = await spool.scan();
  let queued = 0;
  for (const one of found.entries) {
    const { doc } = one;
    if (!("request" in doc)) continue;
    if (doc.plugins_dir !== dirs.plugins_dir || doc.hooks_dir !== dirs.hooks_dir) continue;
    const entry = await spool.claim(one);
    if (entry === null) continue;
    try {
      await requeue(state, entry, doc);
      queued++;
    } catch (error) {
      await spool.setAside(entry, "failed", `cannot run it again: ${(error as Error).message}`);
    }
  }
  if (queued > 0) {
    log.log("info", "Running the events a previous daemon left", {
      events: queued,
      spool: spool.dir,
    });
  }
}

// What a library caller gives is checked as the command line checks `serve`'s flags, before
// anything starts: no unknown address is bound to every interface, no NaN reaches a timer.
function checkOptions(options: DaemonOptions): void {
  const { listen } = options;
  const known = listen?.transport === "unix"
    ? typeof listen.path === "string" && listen.path !== ""
    : listen?.transport === "tcp" && typeof listen.hostname === "string" &&
      Number.isInteger(listen.port) && listen.port >= 0 && listen.port <= 65535;
  if (!known) {
    throw new TypeError(
      `Invalid listen address ${JSON.stringify(listen)}: expected {transport: "unix", path} ` +
        'or {transport: "tcp", hostname, port}',
    );
  }
  checkExposure(listen, options.token);
  for (const [kind, ms] of Object.entries(options.timeouts ?? {})) {
    if (ms !== undefined) checkDuration(ms, `${kind} timeout`);
  }
  if (options.stopTimeoutMs !== undefined) checkDuration(options.stopTimeoutMs, "stopTimeoutMs");
  const { maxProcs } = options;
  if (maxProcs !== undefined && !(Number.isInteger(maxProcs) && maxProcs >= 1)) {
    throw new RangeError(`Invalid maxProcs: ${maxProcs} (must be an integer, at least 1)`);
  }
}
