/**
 * The daemon's HTTP server on `Deno.serve` alone, for a Deno without the per-connection server
 * {@linkcode ConnServer} is built on, or when `TYHOOKS_SERVE_PUBLIC=1` asks for it.
 *
 * `Deno.serve` shows a handler no connection: it cannot count, time or close one. So here
 * `maxConns` bounds the requests being answered at once (more get 503),
 * which keeps the memory bodies may take as bounded as on the per-connection server; but idle
 * connections are not counted, nothing times out a client that sends its headers slowly or never
 * (Deno 2.9's server waits forever), and an answer saying `Connection: close` leaves its
 * connection open. A request without `Host` (HTTP/2) still gets 505. The request bounds (body size
 * and time, lib/serve/http.ts) are the handler's and hold on both servers.
 *
 * @module
 */

import { type Logger, silentLogger } from "../log.ts";
import { type ConnServerOptions, DEFAULT_MAX_CONNS, notHttp11 } from "./conn_server.ts";
import { json } from "./http.ts";

type Handler = (request: Request) => Response | Promise<Response>;

/** Where {@linkcode PublicServer} listens: a unix socket path, or a TCP address. */
export type PublicListen = { path: string } | { hostname: string; port: number };

/** An HTTP server on `Deno.serve`, with what it can keep of the connection limits. */
export class PublicServer {
  #server: Deno.HttpServer<Deno.Addr>;
  #maxConns: number;
  #inFlight = 0;

  /**
   * Listens at `listen` at once (throws when it cannot) and serves `handler`; `reason` says why
   * (logged, with what this server does not enforce).
   */
  constructor(
    listen: PublicListen,
    handler: Handler,
    options: ConnServerOptions & { reason: string },
  ) {
    this.#maxConns = Math.max(1, options.maxConns ?? DEFAULT_MAX_CONNS);
    const log: Logger = options.log ?? silentLogger;
    log.log(
      "warn",
      `Serving through Deno.serve (${options.reason}): --max-conns bounds requests in flight, ` +
        "not connections, and slow or idle clients are not timed out",
    );
    const serve = async (request: Request): Promise<Response> => {
      if (!request.headers.has("host")) return notHttp11();
      if (this.#inFlight >= this.#maxConns) {
        await request.body?.cancel();
        return json(503, {
          error: `Too many requests at once: ${this.#maxConns} are being answered`,
        });
      }
      this.#inFlight++;
      try {
        return await handler(request);
      } finally {
        this.#inFlight--;
      }
    };
    this.#server = Deno.serve({ ...listen, onListen: () => {}, onError: options.onError }, serve);
  }

  /** Where it listens, TCP port resolved. */
  get addr(): Deno.Addr {
    return this.#server.addr;
  }

  /** Requests answered at once at most. */
  get maxConns(): number {
    return this.#maxConns;
  }

  /**
   * Stops accepting at once, lets the requests in flight be answered, and resolves when every
   * connection is closed.
   */
  async shutdown(): Promise<void> {
    await this.#server.shutdown();
  }
}
