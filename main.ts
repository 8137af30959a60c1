/**
 * The tyhooks command line: signals, exit codes, and the call into `lib/cli/`, which reads the
 * line and runs the command. Everything else is in `lib/`.
 *
 * @module
 */

import type { Interrupt } from "./lib/cli/types.ts";

if (import.meta.main) {
  // deno task runs in the repository; `deno task cli` says where the user stands, so relative
  // paths on the line mean what they meant there.
  if (Deno.permissions.querySync({ name: "env", variable: "TYHOOKS_CWD" }).state === "granted") {
    const callerDir = Deno.env.get("TYHOOKS_CWD");
    Deno.env.delete("TYHOOKS_CWD"); // Not for the hooks: they run where their plugin is.
    if (callerDir) Deno.chdir(callerDir);
  }
  // A coding agent's hook call goes to the daemon first, when one serves its plugins: the rest
  // of the command line is most of a start, and loads only to decide in-process.
  const agentCall = Deno.args.includes("agent") || Deno.args.includes("--claude");
  const answer = agentCall
    ? await (await import("./lib/agents/daemon_client.ts")).answerFromDaemon(Deno.args)
    : null;
  if (answer !== null) {
    const { writeAll } = await import("./lib/fs.ts");
    await writeAll(Deno.stdout, new TextEncoder().encode(answer.stdout));
    await writeAll(Deno.stderr, new TextEncoder().encode(answer.stderr));
    Deno.exit(answer.exitCode);
  }
}

const { describeFailure, failureCode, isAgentLine, prepare } = await import(
  "./lib/cli/command_line.ts"
);
const { EXIT, INTERRUPTS } = await import("./lib/cli/types.ts");
const { RunError } = await import("./lib/errors.ts");
const { stderrWriter } = await import("./lib/log.ts");
const { writeAll } = await import("./lib/fs.ts");

/** The signal that interrupted the command, for the exit code even when the command then threw. */
let caught: Interrupt | undefined;
/** The line's `--on-failure`, once the line is parsed. */
let onFailure: string | undefined;
const encoder = new TextEncoder();

async function print(text: string): Promise<void> {
  await write(encoder.encode(text));
}

async function write(bytes: Uint8Array): Promise<void> {
  // After an interrupt the command's answer is not an answer (a tool call judged while its
  // guard was being killed, say): the exit code says "interrupted" and stdout stays empty.
  if (caught !== undefined) return;
  await writeAll(Deno.stdout, bytes);
}

// In order with the log lines, never waiting on stderr's reader nor failing (a guard's block must
// stay exit 2); flushed before exit.
function printError(text: string): void {
  stderrWriter.write(text);
}

async function main(args: string[]): Promise<number> {
  const prepared = await prepare(args, { print, write, printError });
  if ("code" in prepared) {
    if (prepared.stdout !== undefined) await print(prepared.stdout);
    if (prepared.stderr !== undefined) printError(prepared.stderr);
    return prepared.code;
  }
  const { spec } = prepared;
  onFailure = prepared.onFailure;
  const controller = new AbortController();
  const signals = INTERRUPTS.filter((name) => !(name === "SIGHUP" && spec.ownsHangup));
  const handlers = signals.map((name) => {
    const handler = () => {
      caught ??= name;
      controller.abort(new RunError(`Interrupted by ${name}`));
    };
    Deno.addSignalListener(name, handler);
    return [name, handler] as const;
  });
  try {
    const code = await prepared.run(controller.signal);
    return caught && !spec.handlesSignals ? EXIT[caught].code : code;
  } finally {
    for (const [name, handler] of handlers) Deno.removeSignalListener(name, handler);
  }
}

if (import.meta.main) {
  let code: number;
  let failure: { error: unknown } | undefined;
  try {
    code = await main(Deno.args);
  } catch (error) {
    failure = { error };
    // A command that failed because it was interrupted still exits as interrupted.
    code = caught !== undefined ? EXIT[caught].code : failureCode(error);
  }
  const agentLine = code !== EXIT.success.code && await isAgentLine(Deno.args);
  if (failure !== undefined) printError(describeFailure(failure.error, Deno.args, { agentLine }));
  // An agent's hook must never fail open: agents let the call through on any exit but 0 and 2,
  // so every failure of tyhooks itself, a usage error included, is "blocked" (exit 2), unless
  // --on-failure allow (undefined when the line could not be parsed: no policy to trust).
  if (agentLine && onFailure !== "allow") code = EXIT.blocked.code;
  // What stderr's reader has not taken yet, within a bound: a stalled one must not hold the exit.
  await stderrWriter.flush();
  Deno.exit(code);
}
