/**
 * HTTP on connections the daemon accepts itself, so hostile clients cannot take it down (the
 * limits of lib/README.md, Daemon, "Hostile clients"). Both times are checked by one sweep a few
 * times per limit (a connection may last a quarter of a limit longer), not a timer per request.
 *
 * `Deno.serve` shows no connection, and Deno 2.9's holds a client that sends half its headers for
 * 45 s and more and ignores `Connection: close`. So each connection goes to Deno's own server
 * (hyper) through `serveHttpOnConnection`, a Deno 2.9 internal that tests/serve/conn_server_test.ts
 * pins. Its cost (`POST /v1/route` and `/v1/tool/pre` over a unix socket, 15 alternating rounds,
 * medians): none at 1 in flight (0.086 against 0.085 ms); at 16, tool pre 3,240/s against 3,300/s,
 * route 3,360/s against 4,330/s. Without it, or with `TYHOOKS_SERVE_PUBLIC=1`, public_server.ts
 * serves.
 *
 * @module
 */

import { type Logger, RateLog, silentLogger } from "../log.ts";
import { runScript } from "../process/run_script.ts";
import { sleep } from "../async.ts";
import { json } from "./http.ts";

/** Connections served at once by default (SPEC "Trust boundaries"). */
export const DEFAULT_MAX_CONNS = 256;
/** Headers must arrive this soon after connecting. */
export const DEFAULT_HEADERS_TIMEOUT_MS = 10_000;
/** A keep-alive connection with no request in flight is closed after this long. */
export const DEFAULT_IDLE_TIMEOUT_MS = 30_000;

/** Descriptors left for hook pipes and the rest: a Deno out of them mid-spawn can panic. */
const FD_RESERVE = 64;

/**
 * How long a connection whose answer closes it stays open for that answer to be written; then cut,
 * as hyper's graceful HTTP/2 close waits for an acknowledgement a hostile peer never sends.
 */
const CLOSE_GRACE_MS = 250;
/** After a failed `accept`, wait this long before the next (doubling up to the max). */
const ACCEPT_RETRY_MS = 10;
const ACCEPT_RETRY_MAX_MS = 1000;

/** The connection limits. */
export interface ConnLimits {
  /** Connections served at once; default 256. */
  maxConns?: number;
  /** Time from connecting to the first request's headers; default 10 s. */
  headersTimeoutMs?: number;
  /** Time a kept-alive connection may wait for its next request; default 30 s. */
  idleTimeoutMs?: number;
}

/** Options of {@linkcode ConnServer}. */
export interface ConnServerOptions extends ConnLimits {
  /** The open files limit ({@linkcode openFilesLimit}); connections leave some of it free. */
  openFiles?: number | null;
  /** Answers a request whose handler threw. */
  onError: (error: unknown) => Response | Promise<Response>;
  log?: Logger;
}

type Handler = (request: Request) => Response | Promise<Response>;

interface ServedConn {
  finished: Promise<void>;
  shutdown(): Promise<void>;
}

type ServeOnConnection = (
  conn: Deno.Conn,
  signal: AbortSignal,
  handler: Handler,
  onError: (error: unknown) => Response | Promise<Response>,
  onListen: () => void,
) => ServedConn;

/** Deno's per-connection HTTP server, or null when this Deno lacks it. */
export function serveOnConnection(): ServeOnConnection | null {
  // deno-lint-ignore no-explicit-any
  const internals = (Deno as any)[(Deno as any).internal];
  const serve = internals?.serveHttpOnConnection;
  return typeof serve === "function" ? serve : null;
}

/** Why the daemon serves through `Deno.serve` rather than {@linkcode ConnServer}, or null. */
export function publicServeReason(): string | null {
  if (Deno.env.get("TYHOOKS_SERVE_PUBLIC") === "1") return "TYHOOKS_SERVE_PUBLIC=1";
  if (serveOnConnection() === null) {
    return `Deno ${Deno.version.deno} has no per-connection HTTP server`;
  }
  return null;
}

/**
 * The soft limit on open files (`ulimit -n`), as a child sees it (Deno grants /proc/self only
 * with every permission); null when unlimited or unknown.
 */
export async function openFilesLimit(): Promise<number | null> {
  const result = await runScript("sh", { args: ["-c", "ulimit -n"], timeoutMs: 5000 });
  const limit = Number(result.stdout.trim());
  return result.exit_code === 0 && Number.isSafeInteger(limit) && limit > 0 ? limit : null;
}

/** An HTTP server over a listener, with the connection limits above. */
export class ConnServer {
  #listener: Deno.Listener;
  #handler: Handler;
  #onError: (error: unknown) => Response | Promise<Response>;
  #serve: ServeOnConnection;
  #maxConns: number;
  #headersMs: number;
  #idleMs: number;
  #log: Logger;
  #live = new Set<ServedConn>();
  #closing = false;
  #stopAccepting = new AbortController();
  #accepting: Promise<void>;
  #refused: RateLog;
  #acceptFailed: RateLog;
  #watched = new Map<ServedConn, Watched>();

  /** Starts accepting on `listener` (closed at shutdown); throws when this Deno lacks the way. */
  constructor(listener: Deno.Listener, handler: Handler, options: ConnServerOptions) {
    const serve = serveOnConnection();
    if (serve === null) throw new Error("This Deno has no per-connection HTTP server");
    this.#serve = serve;
    this.#listener = listener;
    this.#handler = handler;
    this.#onError = options.onError;
    this.#maxConns = Math.max(1, options.maxConns ?? DEFAULT_MAX_CONNS);
    this.#headersMs = options.headersTimeoutMs ?? DEFAULT_HEADERS_TIMEOUT_MS;
    this.#idleMs = options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS;
    this.#log = options.log ?? silentLogger;
    const fds = options.openFiles ?? null;
    if (fds !== null && this.#maxConns > fds - FD_RESERVE) {
      // The limit in effect is logged once, by whoever reports the start (`maxConns`).
      this.#log.log(
        "warn",
        `Serving fewer than ${this.#maxConns} connections: the open files limit is ${fds}, ` +
          `and ${FD_RESERVE} descriptors are kept for hooks`,
        { hint: "raise it (ulimit -n) or lower --max-conns" },
      );
      this.#maxConns = Math.max(1, fds - FD_RESERVE);
    }
    this.#refused = new RateLog(this.#log, "Too many connections: closed new ones at once");
    this.#acceptFailed = new RateLog(this.#log, "Cannot accept a connection");
    this.#accepting = this.#acceptLoop();
    void this.#sweepLoop();
  }

  /** Where it listens. */
  get addr(): Deno.Addr {
    return this.#listener.addr;
  }

  /** Connections served at once at most (`maxConns`, lowered to fit the open files limit). */
  get maxConns(): number {
    return this.#maxConns;
  }

  /** Connections served now. */
  get connections(): number {
    return this.#live.size;
  }

  /** Connections closed at once because `maxConns` were served. */
  get refused(): number {
    return this.#refused.count;
  }

  /** Stops accepting, lets requests in flight be answered, resolves once every conn is closed. */
  async shutdown(): Promise<void> {
    if (!this.#closing) {
      this.#closing = true;
      this.#stopAccepting.abort();
      try {
        this.#listener.close();
      } catch {
        // Already closed.
      }
    }
    await this.#accepting;
    const conns = [...this.#live];
    await Promise.allSettled(conns.map((conn) => conn.shutdown()));
    await Promise.allSettled(conns.map((conn) => conn.finished));
  }

  async #acceptLoop(): Promise<void> {
    let retryMs = ACCEPT_RETRY_MS;
    while (!this.#closing) {
      let conn: Deno.Conn;
      try {
        conn = await this.#listener.accept();
      } catch (error) {
        if (this.#closing) return;
        // EMFILE/ENFILE leave the connection in the backlog: accept again after a pause, so
        // the loop does not spin while descriptors are short; closed connections free them.
        this.#acceptFailed.note({ error: (error as Error).message, connections: this.#live.size });
        await sleep(retryMs, this.#stopAccepting.signal);
        retryMs = Math.min(retryMs * 2, ACCEPT_RETRY_MAX_MS);
        continue;
      }
      retryMs = ACCEPT_RETRY_MS;
      if (this.#live.size >= this.#maxConns) {
        this.#refused.note({ max_conns: this.#maxConns });
        try {
          conn.close();
        } catch {
          // Closed by the peer already.
        }
        continue;
      }
      this.#serveConn(conn);
    }
  }

  #serveConn(conn: Deno.Conn): void {
    const abort = new AbortController();
    // Checked by the sweep, not by a timer per request: two numbers per request instead.
    const watch: Watched = {
      abort,
      inFlight: 0,
      since: performance.now(),
      requests: 0,
      closing: false,
    };
    // Once the server is shut down, hyper owns the connection: an abort would find it gone.
    const cut = () => {
      if (!this.#closing) abort.abort();
    };
    const handler = async (request: Request): Promise<Response> => {
      // HTTP/1.1 answers a connection's requests one at a time: a second one while the first is
      // answered is HTTP/2 multiplexing, which would let one slot of maxConns carry any number.
      // A request after an answer that closes the connection is cut too.
      if (watch.inFlight > 0 || watch.closing) {
        cut();
        return notHttp11();
      }
      // Hyper also speaks HTTP/2 (h2c) and Deno has no switch for it. HTTP/2 clients send no
      // Host (they send :authority), while HTTP/1.1 requires one (RFC 9112, 3.2).
      if (!request.headers.has("host")) {
        watch.closing = true;
        watch.since = performance.now();
        return notHttp11();
      }
      watch.inFlight++;
      watch.requests++;
      try {
        const response = await this.#handler(request);
        // Hyper keeps the connection open whatever the answer's Connection header says.
        if (response.headers.get("connection")?.toLowerCase() === "close") watch.closing = true;
        return response;
      } finally {
        // The answer is handed over; from now on the connection waits for its next request.
        watch.inFlight--;
        watch.since = performance.now();
      }
    };
    let served: ServedConn;
    try {
      served = this.#serve(conn, abort.signal, handler, this.#onError, () => {});
    } catch (error) {
      this.#acceptFailed.note({ error: (error as Error).message, connections: this.#live.size });
      try {
        conn.close();
      } catch {
        // Nothing to close.
      }
      return;
    }
    this.#live.add(served);
    this.#watched.set(served, watch);
    served.finished
      .catch((error) => this.#log.log("debug", "Connection ended", { error: String(error) }))
      .finally(() => {
        this.#live.delete(served);
        this.#watched.delete(served);
      });
  }

  /** Closes connections past their headers or idle time, a few times per the shorter limit. */
  async #sweepLoop(): Promise<void> {
    const tick = Math.max(10, Math.min(1000, Math.min(this.#headersMs, this.#idleMs) / 4));
    while (await sleep(tick, this.#stopAccepting.signal)) {
      const now = performance.now();
      for (const watch of this.#watched.values()) {
        if (watch.inFlight > 0) continue;
        const limit = watch.closing
          ? CLOSE_GRACE_MS
          : watch.requests === 0
          ? this.#headersMs
          : this.#idleMs;
        if (now - watch.since >= limit) watch.abort.abort();
      }
    }
  }
}

/** The answer to a request that is not HTTP/1.1; its connection is closed. */
export function notHttp11(): Response {
  return json(
    505,
    { error: "HTTP version not supported: the daemon speaks HTTP/1.1, with a Host header" },
    { connection: "close" },
  );
}

/** What the sweep knows of a connection. */
interface Watched {
  abort: AbortController;
  /** Requests being answered now. */
  inFlight: number;
  /** When it connected, or answered its last request. */
  since: number;
  /** Requests so far: none means it is still owing its first headers. */
  requests: number;
  /** Its last answer closes it: it is cut once that answer has had time to be written. */
  closing: boolean;
}
