/**
 * Test helper: a real `tyhooks serve` child process, started from source with the binary's
 * permissions, waited for until it logs its address, and talked to with `fetch` over its unix
 * socket or TCP port. Always stop it in `finally` (`stop()`, or `kill()` as the last resort).
 */

import { spawnCli, tempDir } from "../_cli.ts";

/** A response, its body decoded as JSON (or null when it is not JSON). */
export interface Answer {
  status: number;
  headers: Headers;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A running daemon. */
export interface ServeProcess {
  pid: number;
  /** The socket path (unix) or null (TCP). */
  socket: string | null;
  /** `http://localhost` (unix) or `http://HOST:PORT`. */
  base: string;
  /** Everything the daemon wrote to stderr so far. */
  stderr(): string;
  /** `fetch` against the daemon. */
  fetch(path: string, init?: RequestInit): Promise<Response>;
  /** A request with a JSON (or raw string) body; the answer decoded. */
  call(method: string, path: string, body?: unknown, headers?: HeadersInit): Promise<Answer>;
  /** Sends `signal` (default SIGTERM) and waits for the exit; returns its code and stderr. */
  stop(signal?: Deno.Signal): Promise<{ code: number; stderr: string }>;
  /** SIGKILL if still running (for `finally`). */
  kill(): Promise<void>;
  /** `kill()`, for `await using`. */
  [Symbol.asyncDispose](): Promise<void>;
}

/** Options of {@linkcode startServe}. */
export interface StartServeOptions {
  env?: Record<string, string>;
  /** How long to wait for the "Listening on" line; default 20 s. */
  timeoutMs?: number;
  /** A command the daemon's argv is run through (see `spawnCli`). */
  wrap?: string[];
  /** The entry file to run (see `spawnCli`). */
  main?: string;
}

const decoder = new TextDecoder();

/**
 * Starts `tyhooks serve <args>` and waits until it listens. Rejects (after killing it) when it
 * exits first or does not listen in time; the error carries its stderr.
 */
export async function startServe(
  args: string[],
  options: StartServeOptions = {},
): Promise<ServeProcess> {
  const child = spawnCli(["serve", ...args], {
    env: options.env,
    stdout: "null",
    wrap: options.wrap,
    main: options.main,
  });
  let stderr = "";
  const reading = (async () => {
    for await (const chunk of child.stderr) stderr += decoder.decode(chunk, { stream: true });
  })();
  let exited = false;
  const status = child.status.then((s) => {
    exited = true;
    return s;
  });

  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let address: string | undefined;
  while (address === undefined) {
    address = /Listening on (\S+)/.exec(stderr)?.[1];
    if (address !== undefined) break;
    if (exited || Date.now() > deadline) {
      if (!exited) child.kill("SIGKILL");
      const { code } = await status;
      await reading;
      throw new ServeStartError(code, stderr);
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  const socket = address.startsWith("unix:") ? address.slice("unix:".length) : null;
  const client = socket === null
    ? undefined
    : Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  const base = socket === null ? `http://${address}` : "http://localhost";
  let closed = false;
  const close = () => {
    if (!closed) client?.close();
    closed = true;
  };

  const daemon: ServeProcess = {
    pid: child.pid,
    socket,
    base,
    stderr: () => stderr,
    fetch: (path, init = {}) => fetch(`${base}${path}`, { ...init, client }),
    async call(method, path, body, headers) {
      const response = await daemon.fetch(path, {
        method,
        headers,
        body: body === undefined
          ? undefined
          : typeof body === "string"
          ? body
          : JSON.stringify(body),
      });
      const text = await response.text();
      let parsed = null;
      try {
        parsed = JSON.parse(text);
      } catch {
        // Not JSON: the test sees null.
      }
      return { status: response.status, headers: response.headers, body: parsed };
    },
    async stop(signal = "SIGTERM") {
      if (!exited) child.kill(signal);
      const { code } = await status;
      await reading;
      close();
      return { code, stderr };
    },
    async kill() {
      if (!exited) child.kill("SIGKILL");
      await status;
      await reading;
      close();
    },
    [Symbol.asyncDispose]: () => daemon.kill(),
  };
  return daemon;
}

/** Starts `tyhooks serve` on a fresh temp socket (`d.socket`) for `plugins`, `args` added. */
export async function serveOn(
  plugins: string,
  args: string[] = [],
  options: StartServeOptions = {},
): Promise<ServeProcess> {
  return startServe(
    ["--listen", `unix:${await tempSocket()}`, "--plugins-dir", plugins, ...args],
    options,
  );
}

/** `tyhooks serve` exited (or hung) before listening. */
export class ServeStartError extends Error {
  /** Its exit code (137 when killed after the wait). */
  readonly code: number;
  /** What it wrote to stderr. */
  readonly stderr: string;
  constructor(code: number, stderr: string) {
    super(`tyhooks serve did not start (exit ${code}):\n${stderr}`);
    this.code = code;
    this.stderr = stderr;
  }
}

/**
 * Runs `tyhooks serve <args>` expecting it to refuse to start. Unlike `cli()`, a daemon that
 * starts by mistake does not hang the test: it is killed, and the code is -1.
 */
export async function serveFailure(
  args: string[],
  options: StartServeOptions = {},
): Promise<{ code: number; stderr: string }> {
  try {
    const daemon = await startServe(args, options);
    const { stderr } = await daemon.stop("SIGKILL");
    return { code: -1, stderr: `Started, though it should not have:\n${stderr}` };
  } catch (error) {
    if (error instanceof ServeStartError) return { code: error.code, stderr: error.stderr };
    throw error;
  }
}

/** A temp socket path short enough for a unix socket address. */
export async function tempSocket(): Promise<string> {
  return `${await tempDir({ prefix: "tyh-" })}/t.sock`;
}
