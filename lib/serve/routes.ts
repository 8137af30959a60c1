/**
 * The endpoint table of the daemon, and matching a request against it: an unknown path is 404,
 * a known path with the wrong method is 405 with an `Allow` header.
 *
 * @module
 */

import type { Handler } from "./context.ts";
import { HttpError } from "./http.ts";
import { health, plugins, services } from "./info_endpoints.ts";
import { hosts, placement, route, runAction } from "./consulted_endpoints.ts";
import { fireEvent, statusChange } from "./event_endpoints.ts";
import { toolPost, toolPre } from "./tool_endpoints.ts";

/** One endpoint. `:name` path segments are parameters. */
export interface Endpoint {
  method: "GET" | "POST";
  path: string;
  handler: Handler;
}

/** Every endpoint, as SPEC lists them. */
export const ENDPOINTS: readonly Endpoint[] = [
  { method: "GET", path: "/v1/health", handler: health },
  { method: "GET", path: "/v1/plugins", handler: plugins },
  { method: "POST", path: "/v1/route", handler: route },
  { method: "POST", path: "/v1/placement", handler: placement },
  { method: "POST", path: "/v1/events/:event", handler: fireEvent },
  { method: "POST", path: "/v1/status-change", handler: statusChange },
  { method: "POST", path: "/v1/actions/:plugin/:action", handler: runAction },
  { method: "POST", path: "/v1/tool/pre", handler: toolPre },
  { method: "POST", path: "/v1/tool/post", handler: toolPost },
  { method: "POST", path: "/v1/hosts", handler: hosts },
  { method: "GET", path: "/v1/services", handler: services },
];

const SPLIT = ENDPOINTS.map((e) => ({ ...e, segments: e.path.split("/") }));

function matchPath(segments: string[], pattern: string[]): Record<string, string> | null {
  if (segments.length !== pattern.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    if (pattern[i].startsWith(":")) {
      if (segments[i] === "") return null;
      try {
        params[pattern[i].slice(1)] = decodeURIComponent(segments[i]);
      } catch {
        return null;
      }
    } else if (segments[i] !== pattern[i]) {
      return null;
    }
  }
  return params;
}

/**
 * Finds the handler of a request.
 *
 * @param method The request method.
 * @param pathname The URL path.
 * @returns The handler and the decoded path parameters.
 * @throws {HttpError} 404 for an unknown path, 405 (with `Allow`) for a wrong method.
 * @example
 * ```ts
 * import { matchEndpoint } from "./routes.ts";
 * const { params } = matchEndpoint("POST", "/v1/events/task.done");
 * console.assert(params.event === "task.done");
 * ```
 */
export function matchEndpoint(
  method: string,
  pathname: string,
): { handler: Handler; params: Record<string, string> } {
  const segments = pathname.split("/");
  const allowed: string[] = [];
  for (const endpoint of SPLIT) {
    const params = matchPath(segments, endpoint.segments);
    if (params === null) continue;
    if (endpoint.method === method) return { handler: endpoint.handler, params };
    allowed.push(endpoint.method);
  }
  if (allowed.length === 0) throw new HttpError(404, `Unknown path "${pathname}"`);
  throw new HttpError(405, `Method ${method} not allowed on "${pathname}": use ${allowed[0]}`, {
    allow: allowed.join(", "),
  });
}
