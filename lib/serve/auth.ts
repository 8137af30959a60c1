/**
 * Who may talk to the daemon. A unix socket (mode 0600) and a loopback TCP address are open to
 * this host's users as the OS allows; any other address needs `--token-file`, and then every
 * request must carry `Authorization: Bearer <token>`.
 *
 * @module
 */

import { UsageError } from "../errors.ts";
import { formatListen, isLoopback, type ListenAddress } from "./listen.ts";
import { readBounded } from "../read_bounded.ts";

const encoder = new TextEncoder();

/** A token file is at most this long (SPEC "Trust boundaries"). */
export const MAX_TOKEN_BYTES = 4096;

/**
 * Reads the token: the file's content, trimmed at both ends. The file must be a regular file
 * owned by the current user with no access for group or others (as sshd's StrictModes wants of
 * a private key): a token others can read or replace guards nothing. It is checked before it is
 * opened, so a FIFO is an error, not a hang.
 *
 * Requires `--allow-read`, `--allow-sys` (the user id).
 *
 * @param path The `--token-file` value.
 * @returns The token.
 * @throws {UsageError} When the file is not a regular file, is another user's, has group or
 * other permissions, is over 4 KiB, cannot be read, or holds no token.
 * @example
 * ```ts
 * import { readTokenFile } from "./auth.ts";
 * const file = await Deno.makeTempFile();
 * await Deno.writeTextFile(file, " s3cret\n", { mode: 0o600 });
 * console.assert(await readTokenFile(file) === "s3cret");
 * ```
 */
export async function readTokenFile(path: string): Promise<string> {
  const what = `--token-file "${path}"`;
  let text: string;
  try {
    const info = await Deno.stat(path);
    if (!info.isFile) throw new UsageError(`Invalid ${what}: not a regular file`);
    const uid = Deno.uid();
    if (uid !== null && info.uid !== null && info.uid !== uid) {
      throw new UsageError(
        `Invalid ${what}: owned by user ${info.uid}, not by the current user ${uid}`,
        "hint: keep the token in a file of your own, mode 0600",
      );
    }
    const mode = (info.mode ?? 0) & 0o777;
    if ((mode & 0o077) !== 0) {
      throw new UsageError(
        `Invalid ${what}: mode ${mode.toString(8).padStart(4, "0")} lets group or others ` +
          "access it",
        `hint: chmod 600 ${path}`,
      );
    }
    text = await readBounded(path, { maxBytes: MAX_TOKEN_BYTES });
  } catch (error) {
    if (error instanceof UsageError) throw error;
    throw new UsageError(`Cannot read ${what}: ${(error as Error).message}`);
  }
  const token = text.trim();
  if (token === "") throw new UsageError(`Invalid ${what}: the file is empty`);
  return token;
}

/**
 * Refuses an address reachable from other hosts when no token guards it.
 *
 * @param address Where the daemon will listen.
 * @param token The token, if `--token-file` was given.
 * @throws {UsageError} For a non-loopback TCP address without a token.
 * @example
 * ```ts
 * import { checkExposure } from "./auth.ts";
 * checkExposure({ transport: "tcp", hostname: "127.0.0.1", port: 7700 }, undefined);
 * ```
 */
export function checkExposure(address: ListenAddress, token: string | undefined): void {
  if (address.transport === "unix" || token !== undefined || isLoopback(address.hostname)) return;
  throw new UsageError(
    `Refusing to listen on "${formatListen(address)}" without "--token-file": ` +
      "only loopback addresses and unix sockets are served without a token",
    "hint: pass --token-file FILE, or listen on 127.0.0.1:PORT or unix:PATH",
  );
}

/**
 * A check of `Authorization: Bearer <token>`. Both sides are hashed first, so the comparison
 * takes the same time whatever the length or the first wrong byte of a guess.
 *
 * @param token The expected token.
 * @returns A function answering whether a request carries it.
 * @example
 * ```ts
 * import { bearerCheck } from "./auth.ts";
 * const ok = bearerCheck("s3cret");
 * console.assert(await ok(new Request("http://x/", { headers: { authorization: "Bearer s3cret" } })));
 * console.assert(!(await ok(new Request("http://x/"))));
 * ```
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
