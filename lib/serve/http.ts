/**
 * JSON responses and the one error type of the HTTP layer: every failure a client sees is
 * `{"error": message}` with a status that says whose fault it was.
 *
 * @module
 */

/**
 * A request the daemon refuses, with its status (400, 401, 404, 405, 413, 503).
 *
 * @example
 * ```ts
 * import { HttpError } from "./http.ts";
 * const err = new HttpError(404, 'Unknown path "/v2"');
 * console.assert(err.status === 404);
 * ```
 */
export class HttpError extends Error {
  override name = "HttpError";
  /** The HTTP status. */
  readonly status: number;
  /** Extra response headers, e.g. `Allow` for 405. */
  readonly headers: Record<string, string>;
  /**
   * @param status The HTTP status.
   * @param message What was wrong, for the `error` field.
   * @param headers Extra response headers.
   */
  constructor(status: number, message: string, headers: Record<string, string> = {}) {
    super(message);
    this.status = status;
    this.headers = headers;
  }
}

/**
 * A JSON response.
 *
 * @param status The HTTP status.
 * @param body The document.
 * @param headers Extra headers.
 * @returns The response.
 * @example
 * ```ts
 * import { json } from "./http.ts";
 * const res = json(200, { ok: true });
 * console.assert(res.headers.get("content-type") === "application/json");
 * ```
 */
export function json(
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): Response {
  return new Response(JSON.stringify(body) + "\n", {
    status,
    headers: { "content-type": "application/json", ...headers },
  });
}

/**
 * The `{"error": message}` response of an error.
 *
 * @param error An HttpError (its status), or anything else (500).
 * @returns The response.
 * @example
 * ```ts
 * import { errorResponse, HttpError } from "./http.ts";
 * console.assert(errorResponse(new HttpError(413, "Too big")).status === 413);
 * ```
 */
export function errorResponse(error: unknown): Response {
  if (error instanceof HttpError) {
    return json(error.status, { error: error.message }, error.headers);
  }
  return json(500, { error: error instanceof Error ? error.message : String(error) });
}
