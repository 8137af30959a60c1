/**
 * Where the daemon listens: `--listen unix:PATH` or `--listen HOST:PORT`, and whether a TCP
 * address is loopback (which decides whether a token is required).
 *
 * @module
 */

import { isAbsolute, join, resolve } from "../_path.ts";
import { UsageError } from "../errors.ts";
import { runtimeDir } from "../dirs.ts";

/**
 * A unix socket path or a TCP host and port.
 *
 * @example
 * ```ts
 * import { type ListenAddress, parseListen } from "./listen.ts";
 * const address: ListenAddress = parseListen("127.0.0.1:8080");
 * console.assert(address.transport === "tcp" && address.port === 8080);
 * ```
 */
export type ListenAddress =
  | { transport: "unix"; path: string }
  | { transport: "tcp"; hostname: string; port: number };

/**
 * The default address: `unix:<runtime>/tyhooks.sock`. Requires `--allow-env`.
 *
 * @returns The address.
 * @example
 * ```ts
 * import { defaultListen } from "./listen.ts";
 * console.assert(defaultListen().transport === "unix");
 * ```
 */
export function defaultListen(): ListenAddress {
  return { transport: "unix", path: join(runtimeDir(), "tyhooks.sock") };
}

/**
 * Parses a `--listen` value. IPv6 hosts are written in brackets: `[::1]:8080`. A relative socket
 * path is made absolute, so the log line and the removal on exit name the same file.
 *
 * @param text `unix:PATH` or `HOST:PORT`; undefined gives {@linkcode defaultListen}.
 * @returns The address.
 * @throws {UsageError} Naming the flag and the bad value.
 * @example
 * ```ts
 * import { parseListen } from "./listen.ts";
 * console.assert(JSON.stringify(parseListen("127.0.0.1:7700")) ===
 *   '{"transport":"tcp","hostname":"127.0.0.1","port":7700}');
 * console.assert(parseListen("unix:/run/t.sock").transport === "unix");
 * ```
 */
export function parseListen(text: string | undefined): ListenAddress {
  if (text === undefined) return defaultListen();
  const hint = "hint: use unix:PATH, HOST:PORT or [IPV6]:PORT";
  if (text.startsWith("unix:")) {
    const path = text.slice("unix:".length);
    if (path === "") throw new UsageError(`Invalid value "${text}" for flag "--listen"`, hint);
    return { transport: "unix", path: isAbsolute(path) ? path : resolve(path) };
  }
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\[\]\s]+)):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (match === null || port > 65535) {
    throw new UsageError(`Invalid value "${text}" for flag "--listen"`, hint);
  }
  return { transport: "tcp", hostname: match[1] ?? match[2], port };
}

/**
 * True for addresses only this host can reach: `localhost`, 127.0.0.0/8, `::1` (also as
 * `::ffff:127.x.y.z`). Anything else, the wildcard addresses included, is not loopback.
 *
 * @param hostname A host name or address.
 * @returns Whether it is loopback.
 * @example
 * ```ts
 * import { isLoopback } from "./listen.ts";
 * console.assert(isLoopback("127.0.0.1") && isLoopback("::1") && !isLoopback("0.0.0.0"));
 * ```
 */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === "localhost" || host === "::1" || host === "0:0:0:0:0:0:0:1") return true;
  const v4 = host.startsWith("::ffff:") ? host.slice("::ffff:".length) : host;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/**
 * The address as `--listen` spells it, for logs.
 *
 * @param address The address.
 * @returns `unix:/path` or `host:port`.
 * @example
 * ```ts
 * import { formatListen } from "./listen.ts";
 * console.assert(formatListen({ transport: "tcp", hostname: "::1", port: 80 }) === "[::1]:80");
 * ```
 */
export function formatListen(address: ListenAddress): string {
  if (address.transport === "unix") return `unix:${address.path}`;
  const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
  return `${host}:${address.port}`;
}
