/**
 * The daemon's HTTP server on `Deno.serve` alone, for a Deno without the per-connection server
 * conn_server.ts is built on, or with `TYHOOKS_SERVE_PUBLIC=1`. `Deno.serve` shows no connection,
 * so `maxConns` bounds the requests being answered (more get 503), which keeps the memory bodies
 * take as bounded; what it cannot keep is listed in lib/README.md, Daemon, "Hostile clients".
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

  /** Listens at once (throws when it cannot); `reason` is logged, with what is not enforced. */
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

  /** Stops accepting, lets requests in flight be answered, resolves once every conn is closed. */
  async shutdown(): Promise<void> {
    await this.#server.shutdown();
  }
}
