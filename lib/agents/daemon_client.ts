/**
 * The agent fast path: `tyhooks agent AGENT` hands its call to the user's daemon of the same
 * plugins dir, so persistent guards answer without a plugin load or a spawn. Loaded before the
 * command line's modules, so it keeps to a few small ones; anything it does not expect leaves the
 * call to the in-process path, with the hook input it read.
 *
 * @module
 */

import { daemonSocket, pluginsDir } from "../paths.ts";
import { INPUT_CAPS, notPrivate, readBoundedBytes, readToEnd, writeAll } from "../fs.ts";
import { parseDuration } from "../async.ts";
import type { CommandAnswer } from "./hook.ts";

/** A command line the fast path can take. */
interface FastCall {
  agent: string;
  /** The event when the hook JSON names none (`tool pre --claude` is PreToolUse). */
  event?: string;
  deadlineMs?: number;
  pluginsDir?: string;
}

/** How long the connect may take: a daemon that does not take it at once is not waited for. */
const CONNECT_MS = 50;
/** The daemon's body cap: a larger hook input is decided in-process. */
const MAX_BODY_BYTES = 1024 * 1024;
/** The answer's cap: a rewrite carries the tool input back. */
const MAX_ANSWER_BYTES = 4 * MAX_BODY_BYTES;
/**
 * `agent`'s `--deadline` when none is given, in-process and through the daemon alike: the tool
 * hooks' default timeout.
 */
export const AGENT_DEADLINE_MS = 30_000;

let hookInput: Promise<Uint8Array> | undefined;

/**
 * The hook input the fast path already read from stdin (or the error reading it gave), for the
 * in-process path; undefined when it read none.
 */
export function readHookInput(): Promise<Uint8Array> | undefined {
  return hookInput;
}

/**
 * Answers the call through the daemon, or null (the caller decides in-process, in what is left of
 * the deadline). Never throws; past the deadline, the in-process path's block on its deadline.
 */
export async function answerFromDaemon(args: string[]): Promise<CommandAnswer | null> {
  const started = performance.now();
  try {
    const call = fastCall(args);
    if (call === null) return null;
    const boundMs = call.deadlineMs ?? AGENT_DEADLINE_MS;
    // Read by either path: started now, it arrives while the rest loads (an in-process call then
    // finds it read). Whoever awaits it sees its error.
    const signal = AbortSignal.timeout(boundMs);
    hookInput = readBoundedBytes("-", { signal, maxBytes: INPUT_CAPS.toolCall }).catch((error) => {
      throw signal.aborted ? new Error(`it did not end within ${boundMs} ms`) : error;
    });
    hookInput.catch(() => {});
    if (Deno.env.get("TYHOOKS_DAEMON") === "off") return null;
    const socket = trustedSocket();
    if (socket === null) return null;
    const body = await hookInput;
    if (body.length > MAX_BODY_BYTES) return null;
    const dir = Deno.realPathSync(pluginsDir(call.pluginsDir));
    const left = Math.max(0, started + boundMs - performance.now());
    // The daemon decides within what is left, so it ends the guards of a call nobody waits for.
    const asked = ask(socket, { call, dir, body, deadlineMs: Math.floor(left) });
    const answer = await Promise.race([asked.answer, after(left, "late" as const)]);
    if (answer !== "late") return answer;
    asked.close();
    // The in-process path's message when the deadline passes undecided.
    const why = `No decision within the ${boundMs} ms deadline`;
    return { exitCode: 2, stdout: "", stderr: `tyhooks: ${why}\n` };
  } catch {
    return null;
  }
}

/**
 * `value` after `ms`. `AbortSignal.timeout` rather than `setTimeout`, which makes Deno load a
 * score of its Node modules; its timer does not hold the process either.
 */
function after<T>(ms: number, value: T): Promise<T> {
  const signal = AbortSignal.timeout(ms);
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(value)));
}

const VALUE_FLAGS = new Set(["plugins-dir", "deadline", "event", "on-failure"]);

/**
 * The call, when the line is one the daemon can answer exactly as the in-process path would:
 * `agent AGENT` or `tool pre|post --claude`, with at most `--plugins-dir`, `--deadline`,
 * `--event` and `--on-failure block`. Anything else (hook scripts of its own, `--timeout`, logs,
 * `--hook-json`) is left to the in-process path.
 */
function fastCall(args: string[]): FastCall | null {
  const words: string[] = [];
  const values = new Map<string, string>();
  let claude = false;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (!arg.startsWith("-")) {
      words.push(arg);
      continue;
    }
    if (arg === "--claude" && !claude) {
      claude = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!arg.startsWith("--") || !VALUE_FLAGS.has(name) || values.has(name)) return null;
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    if (value === undefined) return null;
    values.set(name, value);
  }
  const onFailure = values.get("on-failure");
  if (onFailure !== undefined && onFailure !== "block") return null;
  const deadline = values.get("deadline");
  const deadlineMs = deadline === undefined ? undefined : parseDuration(deadline);
  if (deadline !== undefined && deadlineMs === undefined) return null;
  const base = { deadlineMs, pluginsDir: values.get("plugins-dir") };
  if (words.length === 2 && words[0] === "agent" && !claude) {
    return { ...base, agent: words[1], event: values.get("event") };
  }
  if (words.length === 2 && words[0] === "tool" && claude && !values.has("event")) {
    if (words[1] === "pre") return { ...base, agent: "claude", event: "PreToolUse" };
    if (words[1] === "post") return { ...base, agent: "claude", event: "PostToolUse" };
  }
  return null;
}

/**
 * The daemon's socket, if only the user could have made it: a socket of theirs allowing no more
 * than 0600, in a dir of theirs allowing no more than 0700. Anything else could be another
 * user's listener, hearing every tool call.
 */
function trustedSocket(): string | null {
  const path = daemonSocket();
  if (!path.startsWith("/")) return null;
  const socket = Deno.lstatSync(path);
  const dir = Deno.lstatSync(path.slice(0, path.lastIndexOf("/")) || "/");
  if (!socket.isSocket || notPrivate(socket, 0o600) !== null) return null;
  if (!dir.isDirectory || notPrivate(dir, 0o700) !== null) return null;
  return path;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder("utf-8", { fatal: true });

/**
 * One HTTP/1.1 request on its own connection (`Connection: close`), written by hand: `fetch`
 * with a unix-socket client costs more to load than the whole exchange. Resolves to null on
 * anything but a well-formed answer; `close` ends it early. The daemon decides within `deadlineMs`.
 */
function ask(
  socket: string,
  { call, dir, body, deadlineMs }: {
    call: FastCall;
    dir: string;
    body: Uint8Array;
    deadlineMs: number;
  },
): { answer: Promise<CommandAnswer | null>; close(): void } {
  let conn: Deno.UnixConn | undefined;
  let closed = false;
  const close = () => {
    closed = true;
    try {
      conn?.close();
    } catch {
      // Already closed.
    }
  };
  const answer = (async () => {
    const connecting = Deno.connect({ transport: "unix", path: socket });
    // A client held off the CPU past the bound (a loaded machine) wakes to both the timer and the
    // connection: the connection gets a moment more, counted from then.
    const connected = await Promise.race([
      connecting,
      after(CONNECT_MS, null).then(() => Promise.race([connecting, after(CONNECT_MS / 5, null)])),
    ]);
    if (connected === null) {
      connecting.then((late) => late.close(), () => {});
      return null;
    }
    conn = connected;
    if (closed) close();
    const event = call.event === undefined ? "" : `&event=${encodeURIComponent(call.event)}`;
    const query = `${event}&deadline=${deadlineMs}`;
    const head =
      `POST /v1/agent/${encodeURIComponent(call.agent)}?form=command${query} HTTP/1.1\r\n` +
      `Host: localhost\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n` +
      `X-Tyhooks-Plugins-Dir: ${encodeURI(dir)}\r\nConnection: close\r\n\r\n`;
    await writeAll(conn, encoder.encode(head));
    await writeAll(conn, body);
    return parseAnswer(await readToEnd(conn, MAX_ANSWER_BYTES));
  })();
  return {
    answer: answer.catch(() => null).finally(close),
    close,
  };
}

/**
 * The command's answer from the daemon's response: 200 with the command form, or 202. Read with
 * string methods: each regular expression's first use costs a call about 0.2 ms.
 */
function parseAnswer(bytes: Uint8Array): CommandAnswer | null {
  const end = indexOfBlankLine(bytes);
  if (end === -1) return null;
  const head = decoder.decode(bytes.subarray(0, end)).toLowerCase();
  const body = decoder.decode(bytes.subarray(end + 4));
  const code = head.startsWith("http/1.1 ") && head[12] === " " ? head.slice(9, 12) : undefined;
  const at = head.indexOf("\r\ncontent-length:");
  if (at === -1) return null;
  const lineEnd = head.indexOf("\r\n", at + 2);
  const length = head.slice(at + 17, lineEnd === -1 ? undefined : lineEnd).trim();
  if (length === "" || bytes.length - end - 4 !== Number(length)) return null;
  if (code === "202") return { exitCode: 0, stdout: "", stderr: "" };
  if (code !== "200") return null;
  const doc = JSON.parse(body);
  const { exit_code: exitCode, stdout, stderr } = doc ?? {};
  if ((exitCode !== 0 && exitCode !== 2) || typeof stdout !== "string") return null;
  if (typeof stderr !== "string") return null;
  return { exitCode, stdout, stderr };
}

// Where the head ends: the first CR LF CR LF.
function indexOfBlankLine(bytes: Uint8Array): number {
  for (let at = bytes.indexOf(0x0d); at !== -1; at = bytes.indexOf(0x0d, at + 1)) {
    if (bytes[at + 1] === 0x0a && bytes[at + 2] === 0x0d && bytes[at + 3] === 0x0a) return at;
  }
  return -1;
}
