/**
 * One request, end to end: the bearer check, the endpoint lookup, the handler over the snapshot
 * taken now, and a `{"error"}` answer for whatever goes wrong (500 only for the daemon's own
 * faults, which are logged).
 *
 * @module
 */

import type { Logger } from "../log.ts";
import type { DaemonState } from "./context.ts";
import { errorResponse, HttpError } from "./http.ts";
import { matchEndpoint } from "./routes.ts";

/** Options of {@linkcode requestHandler}. */
export interface RequestHandlerOptions {
  /** Answers whether a request carries the token; null = no token required. */
  check: ((request: Request) => Promise<boolean>) | null;
  log: Logger;
}

/**
 * The daemon's `Deno.serve` handler.
 *
 * @param state The daemon's shared state.
 * @param options Token check and logger.
 * @returns The handler.
 * @example
 * ```ts
 * import { requestHandler } from "./request_handler.ts";
 * import { silentLogger } from "../log.ts";
 * const handle = requestHandler({} as never, { check: null, log: silentLogger });
 * console.assert((await handle(new Request("http://x/nope"))).status === 404);
 * ```
 */
export function requestHandler(
  state: DaemonState,
  options: RequestHandlerOptions,
): (request: Request) => Promise<Response> {
  const { check, log } = options;
  return async (request) => {
    const started = performance.now();
    const url = new URL(request.url);
    let response: Response;
    try {
      // Before routing: a client without the token learns nothing, not even which paths exist.
      if (check !== null && !(await check(request))) {
        throw new HttpError(401, "Missing or wrong bearer token", { "www-authenticate": "Bearer" });
      }
      const { handler, params } = matchEndpoint(request.method, url.pathname);
      // A request on a kept-alive connection may still come in while the daemon stops: it
      // gets a clear refusal, not an answer from half-stopped runners.
      if (state.stopping) throw new HttpError(503, "The daemon is stopping");
      const snapshot = state.holder.current;
      response = await handler({ request, url, params, snapshot, daemon: state });
    } catch (error) {
      if (!(error instanceof HttpError)) {
        log.log("error", `Request failed: ${(error as Error).message}`, { path: url.pathname });
      }
      response = errorResponse(error);
    }
    log.log("debug", "Request", {
      method: request.method,
      path: url.pathname,
      status: response.status,
      ms: Math.round(performance.now() - started),
    });
    return response;
  };
}
