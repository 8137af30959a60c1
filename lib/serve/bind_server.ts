/**
 * Listening at a `--listen` address, a unix socket (claimed, bound mode 0600) or a TCP host and
 * port (port 0 resolved to the real one), and serving HTTP there under the connection limits.
 *
 * @module
 */

import { RunError } from "../errors.ts";
import { formatListen, type ListenAddress } from "./listen.ts";
import { bindSocket, claimSocketPath, type SocketIdentity } from "./unix_socket.ts";
import { errorResponse } from "./http.ts";
import { ConnServer, type ConnServerOptions, openFilesLimit } from "./conn_server.ts";

/** A listening server. */
export interface BoundServer {
  server: ConnServer;
  /** Where it listens, TCP port resolved. */
  address: ListenAddress;
  /** The socket file, for removal at exit; null for TCP. */
  socket: SocketIdentity | null;
}

/**
 * Listens at `address` and serves `handle`. Nothing is written to stdout.
 *
 * Requires `--allow-net`, and `--allow-read` `--allow-write` for a unix socket.
 *
 * @param address Where to listen.
 * @param handle The request handler.
 * @param options Connection limits and logger.
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
  options: Omit<ConnServerOptions, "onError"> = {},
): Promise<BoundServer> {
  // Asked first: it also makes the first spawn before any client can use up the descriptors.
  const openFiles = options.openFiles === undefined ? await openFilesLimit() : options.openFiles;
  try {
    return await bind(address, handle, { ...options, openFiles, onError: errorResponse });
  } catch (error) {
    if (error instanceof RunError) throw error;
    // Deno's errors name no address ("Address already in use (os error 98)"): add it.
    throw new RunError(`Cannot listen on "${formatListen(address)}": ${(error as Error).message}`);
  }
}

async function bind(
  address: ListenAddress,
  handle: (request: Request) => Response | Promise<Response>,
  options: ConnServerOptions,
): Promise<BoundServer> {
  if (address.transport === "unix") {
    await claimSocketPath(address.path);
    const bound = await bindSocket(
      address.path,
      (path) => Deno.listen({ transport: "unix", path }),
    );
    const server = serveOn(bound.value, handle, options);
    return { server, address, socket: bound.identity };
  }
  const listener = Deno.listen({ hostname: address.hostname, port: address.port });
  const server = serveOn(listener, handle, options);
  return { server, address: { ...address, port: listener.addr.port }, socket: null };
}

function serveOn(
  listener: Deno.Listener,
  handle: (request: Request) => Response | Promise<Response>,
  options: ConnServerOptions,
): ConnServer {
  try {
    return new ConnServer(listener, handle, options);
  } catch (error) {
    listener.close();
    throw error;
  }
}
