/**
 * Starting tyhooks itself again in the background (`--detach`): its own session, stdin from
 * /dev/null, stdout and stderr appended to a log file (kept to two files of a bounded size), and
 * no tie to the caller, which returns at once.
 *
 * @module
 */

import { dirname } from "node:path";

const PERMISSIONS = ["read", "write", "env", "run", "sys", "net"] as const;

/**
 * The command line that starts this same tyhooks: the binary itself when compiled, else
 * `deno run` with the permissions this process holds, the config next to the entry file, and
 * the entry file.
 *
 * @returns Program and leading arguments.
 * @example
 * ```ts
 * import { selfCommand } from "./detach.ts";
 * const [program] = selfCommand();
 * console.assert(program === Deno.execPath());
 * ```
 */
export function selfCommand(): string[] {
  if (Deno.build.standalone) return [Deno.execPath()];
  const flags = PERMISSIONS
    .filter((name) => Deno.permissions.querySync({ name }).state === "granted")
    .map((name) => `--allow-${name}`);
  const main = new URL(Deno.mainModule);
  const config = new URL("deno.json", main);
  const configFlags = main.protocol === "file:" && exists(config)
    ? ["--config", config.pathname]
    : [];
  return [Deno.execPath(), "run", "--quiet", "--no-prompt", ...flags, ...configFlags, main.href];
}

function exists(url: URL): boolean {
  try {
    return Deno.statSync(url).isFile;
  } catch {
    return false;
  }
}

/** Past this size the detached log is moved to `<log>.1` (replacing it) and started afresh. */
export const MAX_LOG_BYTES = 4 * 1024 * 1024;

/**
 * Starts `command` in a new session, detached from the caller, output appended to `logPath`.
 * A log that has reached `maxLogBytes` is first moved to `<logPath>.1`, so the two files never
 * hold much more than twice that: a hook host firing events for years does not fill its disk.
 *
 * Requires `--allow-run` and `--allow-write` for the log's directory.
 *
 * @param command Program and arguments.
 * @param logPath The log file (its directory is created).
 * @param options `maxLogBytes`: when to rotate; default {@linkcode MAX_LOG_BYTES}.
 * @returns The background process's pid.
 * @example
 * ```ts
 * import { spawnDetached } from "./detach.ts";
 * const pid = spawnDetached(["true"], await Deno.makeTempFile());
 * console.assert(pid > 0);
 * ```
 */
export function spawnDetached(
  command: string[],
  logPath: string,
  options: { maxLogBytes?: number } = {},
): number {
  Deno.mkdirSync(dirname(logPath), { recursive: true });
  rotate(logPath, options.maxLogBytes ?? MAX_LOG_BYTES);
  // sh does the redirection so the background run owns its log file, not a pipe to us.
  const child = new Deno.Command("/bin/sh", {
    args: ["-c", 'log=$1; shift; exec "$@" </dev/null >>"$log" 2>&1', "sh", logPath, ...command],
    stdin: "null",
    stdout: "null",
    stderr: "null",
    detached: true,
  }).spawn();
  child.unref();
  return child.pid;
}

// Background runs still writing to the old file keep their descriptor and finish in `.1`. Two
// callers rotating at once lose nothing either: rename is atomic, and the loser finds no file.
function rotate(logPath: string, maxBytes: number): void {
  try {
    if (Deno.statSync(logPath).size < maxBytes) return;
    Deno.renameSync(logPath, `${logPath}.1`);
  } catch {
    // No log yet, or another caller just rotated it.
  }
}
