/**
 * `doctor`'s daemon check: a daemon the agent fast path would use (its socket the user's alone),
 * of the same plugins dir and version. No daemon is fine: calls then decide in-process. One that
 * takes connections and does not answer is not: guarded calls wait for it, then block.
 *
 * @module
 */

import { type Check, passed, problem } from "./check.ts";
import { daemonSocket, dirname } from "../paths.ts";
import { currentUid, modeText, notPrivate } from "../fs.ts";
import { quoted } from "../text.ts";
import { VERSION } from "../version.ts";
import { isRecord } from "../wire/json.ts";

const NAME = "daemon";
/** A daemon of the user's answers health at once; one that does not within this is not used. */
const HEALTH_TIMEOUT_MS = 2000;

/** The daemon check, for a tyhooks whose plugins dir is `pluginsDir`. */
export async function daemonCheck(pluginsDir: string): Promise<Check> {
  let socket: string;
  try {
    socket = daemonSocket();
  } catch (error) {
    return passed(NAME, `no default socket (${(error as Error).message}), so none is used`);
  }
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(socket);
  } catch {
    return passed(NAME, `none on ${quoted(socket)}: calls decide in-process`);
  }
  if (!info.isSocket) {
    return problem("fail", NAME, {
      detail: `${quoted(socket)} is not a socket`,
      fix: `move ${quoted(socket)} away (tyhooks serve never replaces a file that is not a socket)`,
    });
  }
  const unsafe = exposed(socket, info, 0o600) ?? exposed(dirname(socket), null, 0o700);
  if (unsafe !== null) return problem("fail", NAME, unsafe);
  const health = await askHealth(socket);
  if (health === "late") {
    return problem("fail", NAME, {
      detail: `a daemon takes connections on ${quoted(socket)} but did not answer its health ` +
        `request within ${HEALTH_TIMEOUT_MS / 1000} s: guarded calls (tyhooks agent, tool pre ` +
        "--claude) hand their call to it, wait for it until their deadline, then block",
      fix: `restart the daemon on ${quoted(socket)} (a stopped one resumes with kill -CONT), ` +
        "or set TYHOOKS_DAEMON=off for the calls tyhooks gets",
    });
  }
  if (health === null) {
    return passed(
      NAME,
      `none answers on ${quoted(socket)} (a socket left behind; the next ` +
        "tyhooks serve replaces it): calls decide in-process",
    );
  }
  const served = typeof health.plugins_dir === "string" ? health.plugins_dir : null;
  const restart = (dir: string) =>
    `stop the daemon on ${quoted(socket)}, then start it again: ` +
    `tyhooks serve --plugins-dir ${quoted(dir)}`;
  if (served === null) {
    return problem("warn", NAME, {
      detail: `the daemon on ${quoted(socket)} (version ${String(health.version)}) does not ` +
        "say which plugins dir it serves",
      fix: restart(pluginsDir),
    });
  }
  if (realPath(served) !== realPath(pluginsDir)) {
    return problem("fail", NAME, {
      detail: `the daemon on ${quoted(socket)} serves the plugins dir ${quoted(served)}, not ` +
        `${quoted(pluginsDir)}`,
      fix: restart(pluginsDir),
    });
  }
  if (health.version !== VERSION) {
    return problem("warn", NAME, {
      detail: `the daemon on ${quoted(socket)} is tyhooks ${String(health.version)}, this is ` +
        VERSION,
      fix: restart(pluginsDir),
    });
  }
  return passed(
    NAME,
    `answers on ${quoted(socket)}, serving the same plugins dir, version ${VERSION}`,
  );
}

// Why `path` is not the user's alone with mode `mode` (the socket 0600, its dir 0700), with the fix.
function exposed(
  path: string,
  known: Deno.FileInfo | null,
  mode: number,
): { detail: string; fix: string } | null {
  let info = known;
  try {
    info ??= Deno.lstatSync(path);
  } catch (error) {
    return {
      detail: `${quoted(path)} cannot be checked: ${(error as Error).message}`,
      fix: `ls -ld ${quoted(path)}`,
    };
  }
  const unsafe = notPrivate(info, mode);
  if (unsafe === "owner") {
    return {
      detail: `${quoted(path)} is owned by user ${info.uid}, not by you (${currentUid()}): the ` +
        "fast path does not use its daemon",
      fix: `stop that daemon, then start your own: tyhooks serve`,
    };
  }
  if (unsafe === "mode") {
    return {
      detail: `${quoted(path)} has mode ${modeText(info.mode!)}, not ${modeText(mode)}: others ` +
        "may reach the daemon, and the fast path does not use it",
      fix: `chmod ${modeText(mode).slice(1)} ${quoted(path)}`,
    };
  }
  return null;
}

// The daemon's health document; "late" when it does not come in time, null when nothing takes the
// connection or the answer is not one.
async function askHealth(socket: string): Promise<Record<string, unknown> | "late" | null> {
  const client = Deno.createHttpClient({ proxy: { transport: "unix", path: socket } });
  try {
    const response = await fetch("http://localhost/v1/health", {
      client,
      signal: AbortSignal.timeout(HEALTH_TIMEOUT_MS),
    });
    const body: unknown = await response.json();
    return response.ok && isRecord(body) ? body : null;
  } catch (error) {
    return (error as Error)?.name === "TimeoutError" ? "late" : null;
  } finally {
    client.close();
  }
}

function realPath(path: string): string {
  try {
    return Deno.realPathSync(path);
  } catch {
    return path;
  }
}
