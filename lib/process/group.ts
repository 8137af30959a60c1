/**
 * A script's process group and session: a child spawned in a session of its own (its pid is its
 * group and session id), its live members, terminating them (SIGTERM, grace, SIGKILL). A
 * descendant that made a group of its own (`set -m`) is still in the session and signalled too;
 * only a deliberate `setsid` escapes.
 *
 * Liveness: a signal probe counts zombies, and where PID 1 does not reap (many containers) an
 * orphan's zombie stays in its group for good, so a kill would always wait out its grace. /proc
 * tells them apart, but Deno reads it only with `--allow-all`; else `pgrep -r` answers for a group
 * and `ps` lists a session (ps is everywhere, pgrep's `-r` is not).
 *
 * @module
 */

import { sleep } from "../async.ts";

/** Default time between SIGTERM and SIGKILL. */
export const DEFAULT_GRACE_MS = 500;
const KILL_POLL_MS = 10;
/** The wait for an empty group polls from 5 ms, doubling up to WAIT_MAX_POLL_MS. */
const WAIT_POLL_MS = 5;
/** Polled this seldom at most: telling zombies apart costs a /proc scan or a pgrep each time. */
const WAIT_MAX_POLL_MS = 100;
/** Process states that count as alive: everything but zombie (Z) and dead (X). */
const LIVE_STATES = "R,S,D,T,t,W,I,P";
let pgrepMissing = false;
let psMissing = false;

type Match = (pgrp: number, session: number) => boolean;

/**
 * True while any process of group `pgid` is alive (unreaped zombies included). Probes with
 * SIGCONT, which is harmless: a stopped member resumes only to be terminated.
 */
export function groupAlive(pgid: number): boolean {
  try {
    Deno.kill(-pgid, "SIGCONT");
    return true;
  } catch {
    // ESRCH: gone. EPERM: the group exists but is not ours to signal, so waiting is pointless.
    return false;
  }
}

/** The pids of group `pgid` that are not zombies, or null when /proc cannot be read. */
export function liveGroupMembers(pgid: number): number[] | null {
  return procPids()?.filter((pid) => procIds(pid)?.[0] === pgid) ?? null;
}

/**
 * The live processes of session `sid` outside group `sid`, from /proc, else from `ps` (/proc
 * denied, or macOS); null when neither can tell.
 */
export async function sessionStrays(sid: number): Promise<number[] | null> {
  const pids = procPids();
  if (pids === null) return await psScan((pgrp, session) => session === sid && pgrp !== sid);
  const strays: number[] = [];
  for (const [i, pid] of pids.entries()) {
    // A stat read costs ~30 us: on a host of thousands of processes the daemon's other requests
    // get their turn between slices.
    if (i % SCAN_SLICE === SCAN_SLICE - 1) await new Promise((resolve) => setTimeout(resolve, 0));
    const ids = procIds(pid);
    if (ids !== null && ids[1] === sid && ids[0] !== sid) strays.push(pid);
  }
  return strays;
}

/**
 * True while group `pgid` has a member that is not a zombie; when neither /proc nor `pgrep` can
 * tell, one the signal probe sees counts as alive (the safe side: its grace, then SIGKILL).
 */
export async function groupHasLiveMembers(pgid: number): Promise<boolean> {
  if (!groupAlive(pgid)) return false;
  const members = liveGroupMembers(pgid);
  if (members !== null) return members.length > 0;
  return (await pgrepLive(pgid)) ?? true;
}

const SCAN_SLICE = 256;

// The pids /proc lists, or null when it cannot be read.
function procPids(): number[] | null {
  try {
    return Array.from(Deno.readDirSync("/proc"), (entry) => Number(entry.name))
      .filter((pid) => Number.isInteger(pid));
  } catch {
    return null;
  }
}

// The group and session of `pid`, or null when it has exited or is a zombie.
function procIds(pid: number): [pgrp: number, session: number] | null {
  let stat: string;
  try {
    stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  } catch {
    return null; // Exited while we looked.
  }
  // Fields after the command name, which is in parentheses and may hold spaces:
  // state ppid pgrp session.
  const [state, _ppid, pgrp, session] = stat.slice(stat.lastIndexOf(")") + 2).split(" ", 4);
  return state === "Z" || state === "X" ? null : [Number(pgrp), Number(session)];
}

async function psScan(match: Match): Promise<number[] | null> {
  if (psMissing) return null;
  let output: Deno.CommandOutput;
  try {
    output = await new Deno.Command("ps", {
      args: ["-e", "-o", "pid=,pgid=,sid=,stat="],
      stdin: "null",
      stdout: "piped",
      stderr: "null",
    }).output();
  } catch {
    psMissing = true;
    return null;
  }
  if (!output.success) return null;
  const live: number[] = [];
  for (const line of new TextDecoder().decode(output.stdout).split("\n")) {
    const [pid, pgrp, session, state] = line.trim().split(/\s+/);
    if (state !== undefined && !/^[ZX]/.test(state) && match(Number(pgrp), Number(session))) {
      live.push(Number(pid));
    }
  }
  return live;
}

async function pgrepLive(pgid: number): Promise<boolean | null> {
  if (pgrepMissing) return null;
  try {
    const { code } = await new Deno.Command("pgrep", {
      args: ["-g", String(pgid), "-r", LIVE_STATES],
      stdin: "null",
      stdout: "null",
      stderr: "null",
    }).output();
    // 0: matched, 1: none; anything else (an old pgrep without -r) cannot tell.
    return code === 0 ? true : code === 1 ? false : null;
  } catch {
    pgrepMissing = true;
    return null;
  }
}

/**
 * Sends `signal` to group `pgid`, else (setsid(1) not yet run, a few microseconds after spawn)
 * to the child itself; false when neither exists any more.
 */
export function signalGroup(pgid: number, signal: Deno.Signal): boolean {
  try {
    Deno.kill(-pgid, signal);
    return true;
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return !(error instanceof Deno.errors.PermissionDenied);
    }
  }
  try {
    Deno.kill(pgid, signal);
    return true;
  } catch {
    return false;
  }
}

/** Options of {@linkcode terminateGroup}. */
export interface TerminateOptions {
  /** How long members get between SIGTERM and SIGKILL; default 500 ms. */
  graceMs?: number;
  /**
   * Resolves when the direct child has been reaped. Until then its zombie keeps the group
   * "alive", so the wait for an empty group includes it.
   */
  reaped?: Promise<unknown>;
}

/**
 * Terminates group `pgid` and its session's strays: SIGTERM, the grace, SIGKILL. Returns within
 * the grace plus a poll tick and one scan; true when SIGKILL was needed.
 */
export async function terminateGroup(
  pgid: number,
  options: TerminateOptions = {},
): Promise<boolean> {
  const graceMs = options.graceMs ?? DEFAULT_GRACE_MS;
  const deadline = performance.now() + graceMs;
  if (!signalGroup(pgid, "SIGTERM")) return false;
  // Scanned after the group's signal, so members that fork while dying are seen; the scan's cost
  // counts against the grace period, keeping the call's bound.
  const strays = await signalStrays(pgid, "SIGTERM");
  let reaped = options.reaped === undefined;
  options.reaped?.then(() => reaped = true, () => reaped = true);
  // Checked at least once even when the scan (a ps spawn on a loaded host) used up the grace.
  do {
    await sleep(Math.max(0, Math.min(KILL_POLL_MS, deadline - performance.now())));
    if (
      reaped && !(await groupHasLiveMembers(pgid)) &&
      (strays === 0 || (await signalStrays(pgid, null)) === 0)
    ) return false;
  } while (performance.now() < deadline);
  const killed = signalGroup(pgid, "SIGKILL");
  return (await signalStrays(pgid, "SIGKILL")) > 0 || killed;
}

/**
 * Terminates what outlived session `sid`'s group in groups of their own, once its leader (pid
 * `sid`) has been reaped. A scan reads every process's stat (about 30 us each), so hooks call it
 * only when something is seen left (pipes open after exit); actions and services at every end.
 */
export async function terminateStrays(sid: number, graceMs = DEFAULT_GRACE_MS): Promise<void> {
  // Linux gives no new process a pid still in use as a session id: a live pid `sid` means the
  // session has emptied and the pid went to someone else, whose session this is not.
  if (pidInUse(sid)) return;
  const deadline = performance.now() + graceMs;
  if ((await signalStrays(sid, "SIGTERM")) === 0) return;
  do {
    await sleep(Math.max(0, Math.min(KILL_POLL_MS, deadline - performance.now())));
    if ((await signalStrays(sid, null)) === 0) return;
  } while (performance.now() < deadline);
  await signalStrays(sid, "SIGKILL");
}

// Whether a process (a zombie too) has pid `pid`; false where /proc cannot tell.
function pidInUse(pid: number): boolean {
  try {
    Deno.statSync(`/proc/${pid}`);
    return true;
  } catch {
    return false;
  }
}

/** Sends `signal` to each stray of session `sid` (null: none, just count them). */
async function signalStrays(sid: number, signal: Deno.Signal | null): Promise<number> {
  const members = await sessionStrays(sid) ?? [];
  if (signal !== null) {
    for (const pid of members) {
      try {
        Deno.kill(pid, signal);
      } catch {
        // Gone since the scan.
      }
    }
  }
  return members.length;
}

/**
 * Waits until group `pgid` has no live member, at most `ms`; true when empty. SIGKILL lands
 * asynchronously, so a caller that promises "nothing is left" waits here.
 */
export async function waitGroupEmpty(
  pgid: number,
  ms: number,
  options: { signal?: AbortSignal } = {},
): Promise<boolean> {
  const deadline = performance.now() + ms;
  let poll = WAIT_POLL_MS;
  while (true) {
    if (!(await groupHasLiveMembers(pgid))) return true;
    const left = deadline - performance.now();
    if (left <= 0 || options.signal?.aborted) return false;
    if (!(await sleep(Math.min(poll, left), options.signal))) return false;
    poll = Math.min(poll * 2, WAIT_MAX_POLL_MS);
  }
}

// Deno's `detached: true` gives a session too, but leaves Deno's fast spawn path: 3-10 ms a spawn,
// growing with tyhooks' memory. Through `setsid(1)` (about 2.3 ms) the child, no group leader,
// calls setsid(2) and execs in place, so the pid is the script's. macOS has no setsid(1).
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
 * A file the system would refuse to execute ("exec format error"): neither a `#!` script nor a
 * native binary. Thrown before the spawn, because both spawn paths exec through `execvp`, which
 * would hand such a file to `/bin/sh` instead of failing as ty's exec does.
 */
export class ExecFormatError extends Error {
  /** Always `"ExecFormatError"`. */
  override name = "ExecFormatError";
}

// The first four bytes (big-endian) of a binary this OS's kernel executes itself.
const BINARY_MAGICS = Deno.build.os === "darwin"
  ? [0xfeedface, 0xfeedfacf, 0xcefaedfe, 0xcffaedfe, 0xcafebabe] // Mach-O, and fat binaries
  : [0x7f454c46]; // ELF
// The kernel reads at most this much of a `#!` line (Linux's BINPRM_BUF_SIZE).
const FIRST_LINE_BYTES = 256;
const header = new Uint8Array(FIRST_LINE_BYTES);

/**
 * True when `bytes` (a file's first bytes) start as a file the kernel executes itself: a `#!`
 * line naming an interpreter, or a native binary (ELF; Mach-O on macOS). A format only a
 * `binfmt_misc` handler knows is not recognised.
 */
export function isExecFormat(bytes: Uint8Array): boolean {
  if (bytes[0] === 0x23 && bytes[1] === 0x21) {
    // "#!" and nothing but blanks before the line's end is no interpreter: ENOEXEC too.
    let at = 2;
    while (bytes[at] === 0x20 || bytes[at] === 0x09) at++;
    return at < bytes.length && bytes[at] !== 0x0a && bytes[at] !== 0x00;
  }
  if (bytes.length < 4) return false;
  const magic = ((bytes[0] << 24) | (bytes[1] << 16) | (bytes[2] << 8) | bytes[3]) >>> 0;
  return BINARY_MAGICS.includes(magic);
}

// The first bytes of the regular file `path` (in a buffer the next call reuses), or null when it
// is not one or cannot be read. The stat first: opening a FIFO would block until someone writes.
function firstBytes(path: string): Uint8Array | null {
  try {
    if (!Deno.statSync(path).isFile) return null;
    const file = Deno.openSync(path);
    try {
      return header.subarray(0, file.readSync(header) ?? 0);
    } finally {
      file.close();
    }
  } catch {
    return null;
  }
}

// Throws ExecFormatError when `command` names a file (it has a slash) that is readable and not
// executable as a program. A stat, an open and a read: tens of microseconds, against
// milliseconds for the spawn. What is not a readable regular file is left to the spawn to judge.
function checkExecFormat(command: string, cwd: string | undefined): void {
  if (!command.includes("/")) return;
  const head = firstBytes(
    command.startsWith("/") || cwd === undefined ? command : `${cwd}/${command}`,
  );
  if (head === null || isExecFormat(head)) return;
  throw new ExecFormatError(
    'it does not start with a "#!" line naming an interpreter, so the system cannot execute it ' +
      "(exec format error, as under ty) " +
      '(hint: make its first line "#!/bin/sh", or the interpreter it is written for)',
  );
}

/** Why the system would not execute a file as a program, judged by its first line. */
export type ExecFormatProblem =
  /** Neither a `#!` line nor a native binary: "exec format error". */
  | "no-shebang"
  /** A `#!` line ending in CR (CRLF line ends): the interpreter is then `/bin/sh\r`. */
  | "crlf";

/**
 * What is wrong with the regular file `path` as a program, from its first bytes; null when
 * nothing is, or when it is not a regular file or cannot be read (its run then says why).
 */
export function execFormatProblem(path: string): ExecFormatProblem | null {
  const head = firstBytes(path);
  if (head === null) return null;
  if (!isExecFormat(head)) return "no-shebang";
  const end = head.indexOf(0x0a);
  return head[0] === 0x23 && end > 0 && head[end - 1] === 0x0d ? "crlf" : null;
}

/**
 * Why the interpreter a script's `#!` line names cannot run it, or null: when it runs, when the
 * file has no such line, or when the name is not an absolute path (left to the exec to judge).
 */
export async function interpreterProblem(path: string): Promise<string | null> {
  const head = firstBytes(path);
  if (head === null) return null;
  const line = new TextDecoder().decode(head).split("\n", 1)[0];
  const interpreter = /^#![ \t]*(\S+)/.exec(line)?.[1];
  if (interpreter === undefined || !interpreter.startsWith("/")) return null;
  const named = `its "#!" line names the interpreter ${JSON.stringify(interpreter)}`;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(interpreter);
  } catch {
    return `${named}, which does not exist`;
  }
  if (!info.isFile || (info.mode !== null && (info.mode & 0o111) === 0)) {
    return `${named}, which is not an executable file`;
  }
  return null;
}

/**
 * Spawns `command` in a new session, stdout and stderr piped. Throws {@linkcode ExecFormatError},
 * or (fallback path only) when it cannot start: through setsid(1) that is exit 126/127 and
 * {@linkcode SETSID_EXEC_FAILURE} on stderr.
 */
export function spawnIsolated(
  command: string,
  options: IsolatedSpawnOptions = {},
): Deno.ChildProcess {
  checkExecFormat(command, options.cwd);
  const session = inSession(command, options.args ?? [], options);
  return new Deno.Command(session.program, {
    args: session.args,
    detached: session.detached,
    cwd: options.cwd,
    env: options.env && withoutNul(options.env),
    stdin: options.stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
}

/**
 * How to start `command` with `args` in a session of its own: through setsid(1) where there is
 * one, else with Deno's `detached` (also with `forceDetached`).
 */
export function inSession(
  command: string,
  args: string[],
  { forceDetached = false }: { forceDetached?: boolean } = {},
): { program: string; args: string[]; detached: boolean } {
  const setsid = forceDetached ? null : findSetsid();
  return setsid === null
    ? { program: command, args, detached: true }
    : { program: setsid, args: [command, ...args], detached: false };
}
