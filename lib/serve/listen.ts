/**
 * Where and to whom the daemon listens (lib/README.md, Daemon, "Who can connect"): `--listen`,
 * the socket bound mode 0600 with no window where others could connect, the token.
 *
 * @module
 */

import { defaultSocket, dirname, isAbsolute, join, resolve } from "../paths.ts";
import { InputError, RunError } from "../errors.ts";
import {
  checkPrivateDir,
  currentUid,
  foreignLink,
  modeText,
  notPrivate,
  readBounded,
  unsafeDirReason,
} from "../fs.ts";
import { errorResponse } from "./http.ts";
import { quoted } from "../text.ts";
import {
  ConnServer,
  type ConnServerOptions,
  openFilesLimit,
  publicServeReason,
} from "./conn_server.ts";
import { type PublicListen, PublicServer } from "./public_server.ts";

/** A unix socket path or a TCP host and port. */
export type ListenAddress =
  | { transport: "unix"; path: string }
  | { transport: "tcp"; hostname: string; port: number };

/** The default address: `unix:<runtime>/tyhooks.sock`. Requires `--allow-env`. */
export function defaultListen(): ListenAddress {
  return { transport: "unix", path: defaultSocket() };
}

/**
 * Parses a `--listen` value (`unix:PATH`, `HOST:PORT`, `[IPV6]:PORT`; none is the default). A
 * relative socket path is made absolute, so the log line and the removal on exit name one file.
 */
export function parseListen(text: string | undefined): ListenAddress {
  if (text === undefined) return defaultListen();
  const invalid = () =>
    new InputError(`Invalid value "${text}" for flag "--listen"`, {
      input: "--listen",
      hint: "hint: use unix:PATH, HOST:PORT or [IPV6]:PORT",
    });
  if (text.startsWith("unix:")) {
    const path = text.slice("unix:".length);
    if (path === "") throw invalid();
    return { transport: "unix", path: isAbsolute(path) ? path : resolve(path) };
  }
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\[\]\s]+)):(\d{1,5})$/.exec(text);
  const port = match ? Number(match[3]) : NaN;
  if (match === null || port > 65535) throw invalid();
  return { transport: "tcp", hostname: match[1] ?? match[2], port };
}

/**
 * True for addresses only this host can reach: `localhost`, 127.0.0.0/8, `::1` (also as
 * `::ffff:127.x.y.z`). Anything else, the wildcard addresses included, is not loopback.
 */
export function isLoopback(hostname: string): boolean {
  const host = hostname.toLowerCase();
  if (host === "localhost" || host === "::1" || host === "0:0:0:0:0:0:0:1") return true;
  const v4 = host.startsWith("::ffff:") ? host.slice("::ffff:".length) : host;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** The address as `--listen` spells it, for logs. */
export function formatListen(address: ListenAddress): string {
  if (address.transport === "unix") return `unix:${address.path}`;
  const host = address.hostname.includes(":") ? `[${address.hostname}]` : address.hostname;
  return `${host}:${address.port}`;
}

const encoder = new TextEncoder();

/** A token file is at most this long (SPEC "Trust boundaries"). */
export const MAX_TOKEN_BYTES = 4096;

/**
 * Reads the token, trimmed. As sshd's StrictModes wants of a key, the file must be the user's,
 * private and named through no other user's symlink: a token others can read or replace guards
 * nothing. Checked before it is opened, so a FIFO is an error, not a hang.
 */
export async function readTokenFile(path: string): Promise<string> {
  const input = "--token-file";
  const what = `--token-file "${path}"`;
  let text: string;
  try {
    // Whoever owns a link on the way chooses the file: a token they can read, say.
    const link = foreignLink(path);
    if (link !== null) {
      throw new InputError(
        `Invalid ${what}: it is named through "${link.link}", a symlink owned by user ` +
          `${link.uid}, not by the current user or root`,
        { input, hint: "hint: name the token file itself, or a link of your own" },
      );
    }
    const info = await Deno.stat(path);
    if (!info.isFile) throw new InputError(`Invalid ${what}: not a regular file`, { input });
    const unsafe = notPrivate(info, 0o700);
    if (unsafe === "owner") {
      throw new InputError(
        `Invalid ${what}: owned by user ${info.uid}, not by the current user ${currentUid()}`,
        { input, hint: "hint: keep the token in a file of your own, mode 0600" },
      );
    }
    if (unsafe === "mode") {
      throw new InputError(
        `Invalid ${what}: mode ${modeText(info.mode!)} lets group or others access it`,
        { input, hint: `hint: chmod 600 ${path}` },
      );
    }
    text = await readBounded(path, { maxBytes: MAX_TOKEN_BYTES });
  } catch (error) {
    if (error instanceof InputError) throw error;
    throw new InputError(`Cannot read ${what}: ${(error as Error).message}`, { input });
  }
  const token = text.trim();
  if (token === "") throw new InputError(`Invalid ${what}: the file is empty`, { input });
  return token;
}

/** Refuses an address reachable from other hosts when no token guards it. */
export function checkExposure(address: ListenAddress, token: string | undefined): void {
  if (address.transport === "unix" || token !== undefined || isLoopback(address.hostname)) return;
  throw new InputError(
    `Refusing to listen on "${formatListen(address)}" without "--token-file": ` +
      "only loopback addresses and unix sockets are served without a token",
    {
      input: "--listen",
      hint: "hint: pass --token-file FILE, or listen on 127.0.0.1:PORT or unix:PATH",
    },
  );
}

/**
 * Why a request comes from a web page, or null. A page the user has open can reach a daemon on
 * loopback TCP through the browser: a cross-site POST (which a browser sends without asking
 * first when it looks like a form's), or any request under a DNS name the page rebinds to
 * 127.0.0.1. Browsers name the page in `Origin` and the name they resolved in `Host`; tyhooks'
 * clients, ty's and curl send no `Origin`, and a loopback name as `Host`.
 */
export function fromBrowser(address: ListenAddress): (request: Request) => string | null {
  const loopback = address.transport === "tcp" && isLoopback(address.hostname);
  return (request) => {
    const origin = request.headers.get("origin");
    if (origin !== null) return `Requests from web pages are refused (Origin ${quoted(origin)})`;
    if (!loopback) return null;
    const host = request.headers.get("host") ?? "";
    // `127.0.0.1:7700`, `localhost`, `[::1]:7700`: the name without its port or brackets.
    const name = host.startsWith("[") ? host.slice(1, host.indexOf("]")) : host.split(":")[0];
    if (isLoopback(name)) return null;
    return `Host ${quoted(host)} is not a loopback name: this daemon answers only to 127.0.0.1, ` +
      "localhost or ::1";
  };
}

/**
 * A check of `Authorization: Bearer <token>`. Both sides are hashed first, so the comparison
 * takes the same time whatever the length or the first wrong byte of a guess.
 */
export function bearerCheck(token: string): (request: Request) => Promise<boolean> {
  const expected = digest(token);
  return async (request) => {
    const header = request.headers.get("authorization") ?? "";
    const match = /^Bearer +(.*)$/i.exec(header);
    const [want, got] = await Promise.all([expected, digest(match ? match[1].trim() : "")]);
    let difference = match ? 0 : 1;
    for (let i = 0; i < want.length; i++) difference |= want[i] ^ got[i];
    return difference === 0;
  };
}

async function digest(text: string): Promise<Uint8Array> {
  return new Uint8Array(await crypto.subtle.digest("SHA-256", encoder.encode(text)));
}

/** sun_path holds 108 bytes, the terminating NUL included. */
const MAX_SOCKET_PATH = 107;

/** Which file a bound socket is, so exit removes it only if nobody replaced it since. */
export interface SocketIdentity {
  path: string;
  dev: number;
  ino: number;
}

/**
 * Makes `path` ready for a new daemon. A socket already there is connected to: refused means a
 * dead daemon's (replaced when binding), accepted a live one's (an error).
 */
export async function claimSocketPath(path: string): Promise<void> {
  const length = encoder.encode(path).length;
  if (length > MAX_SOCKET_PATH) {
    throw new RunError(
      `Socket path too long: "${path}" is ${length} bytes, at most ${MAX_SOCKET_PATH}`,
    );
  }
  const dir = dirname(path);
  const hint =
    "hint: use a directory only you can write to (--listen unix:PATH, or $XDG_RUNTIME_DIR)";
  // A 0600 socket is no protection when another user can unlink it and bind their own there.
  const checkReplaceable = (at: string) => {
    const unsafe = unsafeDirReason(at);
    if (unsafe === null) return;
    throw new RunError(
      `Cannot use socket "${path}": another user could replace it: ${unsafe}\n${hint}`,
    );
  };
  // Before the socket's dir is made too, so a refusal leaves no dir behind.
  checkReplaceable(existingDir(dir));
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  checkReplaceable(dir);
  // Nor when another user may make files in its dir, even a sticky one (as /tmp): they can bind
  // its name while no daemon runs. (The agent fast path and doctor ask more of the dir: 0700, no
  // link; a daemon in a 0755 dir of yours serves other clients, agents go in-process.)
  const own = checkPrivateDir(Deno.realPathSync(dir), "the socket's dir");
  if (!own.ok) throw new RunError(`Cannot use socket "${path}": ${own.reason}\n${hint}`);
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

// `dir`, or the nearest dir above it that exists.
function existingDir(dir: string): string {
  for (let at = dir;; at = dirname(at)) {
    try {
      Deno.lstatSync(at);
      return at;
    } catch {
      if (at === "/") return at;
    }
  }
}

/**
 * Binds a socket at `path` mode 0600 with no moment at 0755: bound in a fresh 0700 dir beside it,
 * chmod-ed, then renamed into place (replacing a stale socket atomically). When that temporary
 * path is too long for a socket address, it binds at `path` and chmods at once.
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
 * socket it judged stale; its file is not ours to delete): true when it did. Never throws.
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

/** A listening server. */
export interface BoundServer {
  server: ConnServer | PublicServer;
  /** Where it listens, TCP port resolved. */
  address: ListenAddress;
  /** The socket file, for removal at exit; null for TCP. */
  socket: SocketIdentity | null;
}

/**
 * Serves `handle` at `address` on {@linkcode ConnServer}, or on `Deno.serve` when
 * {@linkcode publicServeReason} gives one; a `RunError` names an address it cannot bind.
 */
export async function bindServer(
  address: ListenAddress,
  handle: (request: Request) => Response | Promise<Response>,
  options: Omit<ConnServerOptions, "onError"> = {},
): Promise<BoundServer> {
  // Asked first: it also makes the first spawn before any client can use up the descriptors.
  const openFiles = options.openFiles === undefined ? await openFilesLimit() : options.openFiles;
  const settings = { ...options, openFiles, onError: errorResponse };
  const reason = publicServeReason();
  const serve = (listen: PublicListen) => {
    if (reason !== null) return new PublicServer(listen, handle, { ...settings, reason });
    const listener = "path" in listen
      ? Deno.listen({ transport: "unix", path: listen.path })
      : Deno.listen(listen);
    try {
      return new ConnServer(listener, handle, settings);
    } catch (error) {
      listener.close();
      throw error;
    }
  };
  try {
    if (address.transport === "unix") {
      await claimSocketPath(address.path);
      const bound = await bindSocket(address.path, (path) => serve({ path }));
      return { server: bound.value, address, socket: bound.identity };
    }
    const server = serve({ hostname: address.hostname, port: address.port });
    const port = (server.addr as Deno.NetAddr).port;
    return { server, address: { ...address, port }, socket: null };
  } catch (error) {
    if (error instanceof RunError) throw error;
    // Deno's errors name no address ("Address already in use (os error 98)"): add it.
    throw new RunError(`Cannot listen on "${formatListen(address)}": ${(error as Error).message}`);
  }
}
