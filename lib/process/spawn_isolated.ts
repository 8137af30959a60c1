/**
 * Starting a child in a session (and process group) of its own, so that it and everything it
 * starts can be signalled as one group.
 *
 * Deno's `detached: true` does this, but only with `.spawn()` and by leaving Deno's fast spawn
 * path: measured at 3-10 ms a spawn, growing with tyhooks' own memory. Exec'ing the script
 * through `setsid(1)` keeps the fast path (about 2.3 ms): the child is not a group leader, so
 * setsid calls setsid(2) and execs in place; the pid is the script's pid and its group id.
 * Hosts without `setsid(1)` (macOS) fall back to `detached: true`.
 *
 * @module
 */

const SETSID_CANDIDATES = ["/usr/bin/setsid", "/bin/setsid"];
let setsidPath: string | null | undefined;

/** The `setsid(1)` binary, or null when the host has none. Looked up once. */
export function findSetsid(): string | null {
  if (setsidPath !== undefined) return setsidPath;
  setsidPath = null;
  if (Deno.build.os !== "linux") return setsidPath;
  for (const candidate of SETSID_CANDIDATES) {
    try {
      if (Deno.statSync(candidate).isFile) return setsidPath = candidate;
    } catch {
      // Not here; try the next.
    }
  }
  return setsidPath;
}

/** How the child's stdio is wired. Stdout and stderr are always piped. */
export interface IsolatedSpawnOptions {
  args?: string[];
  cwd?: string;
  env?: Record<string, string>;
  /** Pipe stdin (to write a payload) instead of /dev/null. */
  stdin?: boolean;
  /** Force the `detached: true` path (used by the benchmark and tests). */
  forceDetached?: boolean;
}

/**
 * `env` without NUL bytes in names or values: no environment can hold one, and a task title or a
 * service's `env` entry with one must not make the spawn throw.
 */
export function withoutNul(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).map(([k, v]) => [k.replaceAll("\0", ""), v.replaceAll("\0", "")]),
  );
}

/** setsid(1) reports an exec failure with this prefix and exit 126/127. */
export const SETSID_EXEC_FAILURE = /^setsid: failed to execute [^\n]*/;

/**
 * Spawns `command` in a new session with stdout and stderr piped.
 *
 * @param command The program (a path, or a name looked up on PATH).
 * @param options Arguments, cwd, env, stdin.
 * @returns The child; its pid is its process-group id.
 * @throws {Error} When the program cannot be started (fallback path only; with setsid(1) an exec
 * failure shows as exit 126/127 and {@linkcode SETSID_EXEC_FAILURE} on stderr).
 */
export function spawnIsolated(
  command: string,
  options: IsolatedSpawnOptions = {},
): Deno.ChildProcess {
  const setsid = options.forceDetached ? null : findSetsid();
  const common = {
    cwd: options.cwd,
    env: options.env && withoutNul(options.env),
    stdin: options.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  } as const;
  if (setsid !== null) {
    return new Deno.Command(setsid, { ...common, args: [command, ...(options.args ?? [])] })
      .spawn();
  }
  return new Deno.Command(command, { ...common, args: options.args ?? [], detached: true }).spawn();
}
