/**
 * Starting `Deno.serve` at a `--listen` address: a unix socket (claimed, bound mode 0600) or a
 * TCP host and port (port 0 resolved to the real one).
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { formatListen, type ListenAddress } from "./listen.ts";
import { bindSocket, claimSocketPath, type SocketIdentity } from "./unix_socket.ts";
import { errorResponse } from "./http.ts";

/** A listening server. */
export interface BoundServer {
  server: Deno.HttpServer;
  /** Where it listens, TCP port resolved. */
  address: ListenAddress;
  /** The socket file, for removal at exit; null for TCP. */
  socket: SocketIdentity | null;
}

/**
 * Listens at `address` and serves `handle`. Nothing is written to stdout (Deno's default
 * "Listening on" line is silenced: stdout is for answers only).
 *
 * Requires `--allow-net`, and `--allow-read` `--allow-write` for a unix socket.
 *
 * @param address Where to listen.
 * @param handle The request handler.
 * @returns The server, its address and its socket.
 * @throws {RunError} When the socket path holds a live daemon or another file, or the address
 * cannot be bound (in use, no permission), naming the address.
 * @example
 * ```ts
 * import { bindServer } from "./bind_server.ts";
 * const { server, address } = await bindServer(
 *   { transport: "tcp", hostname: "127.0.0.1", port: 0 },
 *   () => new Response("ok"),
 * );
 * console.assert(address.transport === "tcp" && address.port > 0);
 * await server.shutdown();
 * ```
 */
export async function bindServer(
  address: ListenAddress,
  handle: (request: Request) => Response | Promise<Response>,
): Promise<BoundServer> {
  try {
    return await bind(address, handle);
  } catch (error) {
    if (error instanceof RunError) throw error;
    // Deno's errors name no address ("Address already in use (os error 98)"): add it.
    throw new RunError(`Cannot listen on "${formatListen(address)}": ${(error as Error).message}`);
  }
}

async function bind(
  address: ListenAddress,
  handle: (request: Request) => Response | Promise<Response>,
): Promise<BoundServer> {
  const options = { onListen: () => {}, onError: errorResponse };
  if (address.transport === "unix") {
    await claimSocketPath(address.path);
    const bound = await bindSocket(
      address.path,
      (path) => Deno.serve({ ...options, path }, handle),
    );
    return { server: bound.value, address, socket: bound.identity };
  }
  const server = Deno.serve({ ...options, hostname: address.hostname, port: address.port }, handle);
  const port = (server.addr as Deno.NetAddr).port;
  return { server, address: { ...address, port }, socket: null };
}
