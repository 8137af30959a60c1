/**
 * Starting tyhooks itself again in the background (`--detach`): its own session, output appended
 * to a private, rotated log, no tie to the caller. The work travels on its stdin as one JSON
 * document, so any value gets through unchanged and nothing shows in `ps`; the caller returns once
 * the run acknowledged it, so a run that could not start is the caller's error, not a silent loss.
 * A log path that is unsafe or unwritable is not used, and the caller is told why.
 *
 * @module
 */

import denoConfig from "../../deno.json" with { type: "json" };
import { RunError } from "../errors.ts";
import { concat, isFile, openPrivateLog, readBounded, rotateLog } from "../fs.ts";
import { clearableTimeout } from "../async.ts";
import { inSession, signalGroup } from "./group.ts";
import { quoted } from "../text.ts";

const PERMISSIONS = ["read", "write", "env", "run", "sys", "net"] as const;

/**
 * The grants the binary is compiled with (deno.json's `tyhooks` permission set) as `--allow-*`
 * flags, then `deno task cli`'s `--unstable-lazy-dynamic-imports` (Deno then reads a module a
 * command may import only when it does: without it every start reads the whole CLI's sources,
 * about 100 files), then the V8 flags of `deno task compile`, read from deno.json here and nowhere
 * else: the launcher and the tests run tyhooks with them, so what runs is what ships.
 */
export const RUN_FLAGS: readonly string[] = [
  ...Object.entries(denoConfig.permissions.tyhooks as Record<string, boolean | string[]>)
    .flatMap(([name, grant]) =>
      grant === true
        ? [`--allow-${name}`]
        : Array.isArray(grant)
        ? [`--allow-${name}=${grant.join(",")}`]
        : []
    ),
  ...(denoConfig.tasks.cli.command.match(/--unstable-[\w-]+/g) ?? []),
  ...(denoConfig.tasks.compile.command.match(/--v8-flags=\S+/g) ?? []),
];

/** What the background run writes on its stdout once it has read its work. */
const ACK = "tyhooks: work received\n";
/** Bound on the work document: flags and a task (1 MiB) with room to spare. */
const MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;
/** How long the caller waits for the background run to take its work (Deno starting up). */
export const DEFAULT_ACK_TIMEOUT_MS = 30_000;

/** The work document: the command line the background run executes, never seen by the OS. */
interface DetachedWork {
  tyhooks_detached: 1;
  args: string[];
}

/**
 * The variable a launcher script (the npm package's `bin/tyhooks`) sets to its own absolute path
 * before it starts tyhooks: what runs this tyhooks again, Deno and its flags included.
 */
export const LAUNCHER_ENV = "TYHOOKS_LAUNCHER";

/**
 * The command line that starts this same tyhooks: the compiled binary, else its launcher
 * ({@linkcode LAUNCHER_ENV}), else `deno run` with this process's permissions and the start and
 * V8 flags of {@linkcode RUN_FLAGS}. Other V8 flags than the caller's would cost both more than
 * a start: Deno keys its code cache on them, so each would compile every module afresh and
 * replace the other's cache (a detached run made the agent's next call about 15 ms slower).
 */
export function selfCommand(): string[] {
  if (Deno.build.standalone) return [Deno.execPath()];
  const launcher = Deno.env.get(LAUNCHER_ENV);
  // Only a path that can be run from anywhere: a relative one means the caller's directory.
  if (launcher !== undefined && launcher.startsWith("/") && isExecutable(launcher)) {
    return [launcher];
  }
  const flags = PERMISSIONS
    .filter((name) => Deno.permissions.querySync({ name }).state === "granted")
    .map((name) => `--allow-${name}`);
  const main = new URL(Deno.mainModule);
  const config = new URL("deno.json", main);
  const configFlags = main.protocol === "file:" && isFile(config)
    ? ["--config", config.pathname]
    : [];
  const startFlags = RUN_FLAGS.filter((flag) => !flag.startsWith("--allow-"));
  const run = ["run", "--quiet", "--no-prompt", ...flags, ...startFlags];
  return [Deno.execPath(), ...run, ...configFlags, main.href];
}

function isExecutable(path: string): boolean {
  try {
    const info = Deno.statSync(path);
    return info.isFile && (info.mode === null || (info.mode & 0o111) !== 0);
  } catch {
    return false;
  }
}

/** Past this size the detached log is moved to `<log>.1` (replacing it) and started afresh. */
export const MAX_LOG_BYTES = 4 * 1024 * 1024;

/** Options of {@linkcode spawnDetached} and {@linkcode handOffDetached}. */
export interface DetachOptions {
  /** When to rotate the log; default {@linkcode MAX_LOG_BYTES}. */
  maxLogBytes?: number;
  /** How long {@linkcode handOffDetached} waits for the acknowledgement; default 30 s. */
  ackTimeoutMs?: number;
  /** Stops {@linkcode handOffDetached}'s wait (tyhooks got SIGINT/SIGTERM); it then rejects. */
  signal?: AbortSignal;
}

/** A background run that was started. */
export interface DetachedRun {
  /** Its pid (also its session and group id). */
  pid: number;
  /** Why it runs without a log (the log path was unsafe or unwritable), or null when it logs. */
  logProblem: string | null;
}

/**
 * Starts `command` in a new session, its output appended to `logPath`, stdin /dev/null. Requires
 * `--allow-run`, `--allow-write` for the log's directory, `--allow-sys` (uid).
 */
export function spawnDetached(
  command: string[],
  logPath: string,
  options: DetachOptions = {},
): DetachedRun {
  const log = openLog(logPath, options.maxLogBytes ?? MAX_LOG_BYTES);
  const child = start(command, log, '</dev/null >>"$0" 2>&1', "null");
  child.unref();
  return { pid: child.pid, logProblem: log.problem };
}

/**
 * Starts `command` (a tyhooks that calls {@linkcode receiveDetached}) in a new session, stderr to
 * `logPath`, hands it `args` on stdin, and resolves once it acknowledged them; a `RunError` when it
 * exits or stalls first. Requires `--allow-run`, `--allow-write`, `--allow-sys` (uid).
 */
export async function handOffDetached(
  command: string[],
  args: string[],
  logPath: string,
  options: DetachOptions = {},
): Promise<DetachedRun> {
  const log = openLog(logPath, options.maxLogBytes ?? MAX_LOG_BYTES);
  const child = start(command, log, '2>>"$0"', "piped");
  const work: DetachedWork = { tyhooks_detached: 1, args };
  const writer = child.stdin.getWriter();
  // A child that dies first breaks the pipe: the missing acknowledgement says what happened.
  writer.write(new TextEncoder().encode(JSON.stringify(work) + "\n"))
    .then(() => writer.close()).catch(() => {});
  const ackTimeoutMs = options.ackTimeoutMs ?? DEFAULT_ACK_TIMEOUT_MS;
  const timeout = clearableTimeout(ackTimeoutMs);
  const reader = child.stdout.getReader();
  const onTimeout = () => reader.cancel().catch(() => {});
  timeout.signal.addEventListener("abort", onTimeout, { once: true });
  options.signal?.addEventListener("abort", onTimeout, { once: true });
  let acknowledged = false;
  try {
    acknowledged = await readAck(reader);
  } finally {
    timeout.signal.removeEventListener("abort", onTimeout);
    options.signal?.removeEventListener("abort", onTimeout);
    timeout.clear();
    reader.cancel().catch(() => {});
  }
  const where = log.path === null ? "" : ` (its log: "${log.path}")`;
  if (!acknowledged) {
    if (timeout.signal.aborted || options.signal?.aborted) {
      // Stalled, or the caller is interrupted: the work must not half-happen behind its back.
      signalGroup(child.pid, "SIGKILL");
      await child.status;
      options.signal?.throwIfAborted();
      throw new RunError(
        `The background tyhooks did not take its work within ${ackTimeoutMs} ms${where}`,
      );
    }
    const status = await child.status;
    const how = status.signal === null ? `exit ${status.code}` : `killed by ${status.signal}`;
    throw new RunError(`The background tyhooks ended (${how}) before taking its work${where}`);
  }
  child.unref();
  return { pid: child.pid, logProblem: log.problem };
}

async function readAck(reader: ReadableStreamDefaultReader<Uint8Array>): Promise<boolean> {
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    while (total < ACK.length) {
      const { done, value } = await reader.read();
      if (done) break;
      chunks.push(value);
      total += value.length;
    }
  } catch {
    return false; // Cancelled at the timeout.
  }
  return new TextDecoder().decode(concat(chunks, total)).startsWith(ACK);
}

/** The background run's side: reads the work from stdin, acknowledges it, returns its args. */
export async function receiveDetached(
  ack: (bytes: Uint8Array) => Promise<void>,
): Promise<string[]> {
  let work: Partial<DetachedWork>;
  try {
    work = JSON.parse(await readBounded("-", { maxBytes: MAX_DOCUMENT_BYTES }));
  } catch (error) {
    throw new RunError(`Cannot read the detached work on stdin: ${(error as Error).message}`);
  }
  const args = work?.args;
  if (
    work?.tyhooks_detached !== 1 || !Array.isArray(args) ||
    !args.every((arg) => typeof arg === "string")
  ) {
    // Not something a person runs by hand: --detach starts tyhooks this way.
    throw new RunError("Cannot read the detached work on stdin: not a work document");
  }
  await ack(new TextEncoder().encode(ACK));
  return args;
}

/** The log to append to, or null (with the reason) when its path is not safe to write. */
interface Log {
  path: string | null;
  problem: string | null;
}

function start(
  command: string[],
  log: Log,
  redirect: string,
  pipes: "piped" | "null",
): Deno.ChildProcess {
  // sh does the redirection so the background run owns its log file, not a pipe to us.
  const target = log.path === null ? redirect.replaceAll('"$0"', "/dev/null") : redirect;
  // Its own session as every hook's: Deno's own `detached` leaves its fast spawn path.
  const session = inSession("/bin/sh", ["-c", `exec "$@" ${target}`, log.path ?? "sh", ...command]);
  try {
    return new Deno.Command(session.program, {
      args: session.args,
      detached: session.detached,
      stdin: pipes,
      stdout: pipes,
      stderr: "null",
    }).spawn();
  } catch (error) {
    throw new RunError(`Cannot start the background tyhooks: ${(error as Error).message}`);
  }
}

/**
 * Appends `line` to the detached log at `path`, made private and moved to `.1` when full as for
 * a background run; why it could not, or null.
 */
export function appendDetachedLog(
  path: string,
  line: string,
  maxBytes: number = MAX_LOG_BYTES,
): string | null {
  const log = openLog(path, maxBytes);
  if (log.path === null) return log.problem;
  try {
    // The dir is the user's own and 0700 now: nobody else can have swapped the file.
    const file = Deno.openSync(log.path, { append: true });
    try {
      file.writeSync(new TextEncoder().encode(line));
    } finally {
      file.close();
    }
    return null;
  } catch (error) {
    return `cannot write ${quoted(path)}: ${(error as Error).message}`;
  }
}

// The log, its dir and file made private (a lax mode narrowed: the dir is tyhooks' cache), and
// moved to `.1` when full; background runs still writing to the old file finish there.
function openLog(path: string, maxBytes: number): Log {
  for (let attempt = 0;; attempt++) {
    const file = openPrivateLog(path, "the detached log", { repair: true });
    if (typeof file === "string") return { path: null, problem: file };
    const { size, ino } = file.statSync();
    file.close();
    if (size < maxBytes || attempt > 0) return { path, problem: null };
    rotateLog(path, ino);
  }
}
