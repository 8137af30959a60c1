/**
 * The daemon's unix socket file: claimed (a stale one from a dead daemon is replaced, a live one
 * refused), bound mode 0600 with no window where others could connect, removed on exit.
 *
 * @module
 */

import { dirname, join } from "../_path.ts";
import { RunError } from "../errors.ts";
import { unsafeDirReason } from "../safe_dir.ts";

/** sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;
const encoder = new TextEncoder();

/** Which file a bound socket is, so exit removes it only if nobody replaced it since. */
export interface SocketIdentity {
  path: string;
  dev: number;
  ino: number;
}

/**
 * Makes `path` ready for a new daemon: creates its directory (mode 0700) when missing, and
 * decides about a file already there by connecting to it: refused means a dead daemon's stale
 * socket (it is replaced when binding), accepted means a live daemon (an error).
 *
 * Requires `--allow-read`, `--allow-write`.
 *
 * @param path The socket path.
 * @throws {RunError} When a daemon answers there, the file is not a socket, the path is too
 * long for a unix socket, or another user could replace the socket (its directory, or one on the
 * way, is theirs, or writable by others and not sticky).
 * @example
 * ```ts
 * import { claimSocketPath } from "./unix_socket.ts";
 * await claimSocketPath(`${await Deno.makeTempDir()}/tyhooks.sock`);
 * ```
 */
export async function claimSocketPath(path: string): Promise<void> {
  const length = encoder.encode(path).length;
  if (length > MAX_SOCKET_PATH) {
    throw new RunError(
      `Socket path too long: "${path}" is ${length} bytes, at most ${MAX_SOCKET_PATH}`,
    );
  }
  await Deno.mkdir(dirname(path), { recursive: true, mode: 0o700 });
  // A 0600 socket is no protection when another user can unlink it and bind their own there.
  const unsafe = unsafeDirReason(dirname(path));
  if (unsafe !== null) {
    throw new RunError(
      `Cannot use socket "${path}": another user could replace it: ${unsafe}\n` +
        "hint: use a directory only you can write to (--listen unix:PATH, or $XDG_RUNTIME_DIR)",
    );
  }
  let info: Deno.FileInfo;
  try {
    info = await Deno.lstat(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return;
    throw new RunError(`Cannot use socket "${path}": ${(error as Error).message}`);
  }
  if (!info.isSocket) {
    throw new RunError(
      `Cannot use socket "${path}": the file exists and is not a socket\n` +
        "hint: remove it, or choose another path with --listen unix:PATH",
    );
  }
  let conn: Deno.UnixConn;
  try {
    conn = await Deno.connect({ transport: "unix", path });
  } catch (error) {
    if (error instanceof Deno.errors.ConnectionRefused) return;
    throw new RunError(`Cannot use socket "${path}": ${(error as Error).message}`);
  }
  conn.close();
  throw new RunError(
    `Another daemon is listening on "${path}"\n` +
      "hint: stop it first, or choose another path with --listen unix:PATH",
  );
}

/**
 * Binds a socket at `path` with mode 0600 and no moment at mode 0755: `bind` listens inside a
 * fresh mode-0700 directory next to `path`, the socket is chmod-ed there, then renamed into place
 * (atomically replacing a stale socket). When the temporary path would not fit in a unix socket
 * address, `bind` listens at `path` itself and the chmod follows at once.
 *
 * Requires `--allow-read`, `--allow-write`, `--allow-net` (for the bind).
 *
 * @param path The socket path, claimed with {@linkcode claimSocketPath}.
 * @param bind Starts listening at the path it is given, e.g. `Deno.serve({ path })`.
 * @returns What `bind` returned, and the socket's identity for {@linkcode removeSocket}.
 * @example
 * ```ts
 * import { bindSocket, removeSocket } from "./unix_socket.ts";
 * const path = `${await Deno.makeTempDir()}/t.sock`;
 * const { value: listener, identity } = await bindSocket(path, (p) =>
 *   Deno.listen({ transport: "unix", path: p }));
 * console.assert(((await Deno.stat(path)).mode! & 0o777) === 0o600);
 * listener.close();
 * await removeSocket(identity);
 * ```
 */
export async function bindSocket<T>(
  path: string,
  bind: (path: string) => T,
): Promise<{ value: T; identity: SocketIdentity }> {
  const staging = await Deno.makeTempDir({ dir: dirname(path), prefix: ".t" });
  const temporary = join(staging, "s");
  try {
    if (encoder.encode(temporary).length > MAX_SOCKET_PATH) {
      await Deno.remove(path).catch(() => {});
      const value = bind(path);
      await Deno.chmod(path, 0o600);
      return { value, identity: await identify(path) };
    }
    const value = bind(temporary);
    await Deno.chmod(temporary, 0o600);
    await Deno.rename(temporary, path);
    return { value, identity: await identify(path) };
  } finally {
    await Deno.remove(staging, { recursive: true }).catch(() => {});
  }
}

async function identify(path: string): Promise<SocketIdentity> {
  const info = await Deno.lstat(path);
  return { path, dev: info.dev, ino: info.ino ?? 0 };
}

/**
 * Removes the socket file if it is still the one bound (another daemon may have replaced a
 * socket it judged stale; its file is not ours to delete). Never throws.
 *
 * Requires `--allow-read`, `--allow-write`.
 *
 * @param identity What {@linkcode bindSocket} returned.
 * @returns True when the file was removed.
 * @example
 * ```ts
 * import { removeSocket } from "./unix_socket.ts";
 * console.assert(!(await removeSocket({ path: "/nonexistent/s", dev: 0, ino: 0 })));
 * ```
 */
export async function removeSocket(identity: SocketIdentity): Promise<boolean> {
  try {
    const info = await Deno.lstat(identity.path);
    if (info.dev !== identity.dev || (info.ino ?? 0) !== identity.ino) return false;
    await Deno.remove(identity.path);
    return true;
  } catch {
    return false;
  }
}
