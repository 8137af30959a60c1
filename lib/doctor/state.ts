/**
 * `doctor`'s checks of what tyhooks keeps between calls: the index cache (used, or ignored and
 * why), the spool (accepted events still waiting to run, or set aside) and the decision log
 * (writable, or why each decision warns).
 *
 * @module
 */

import { type Check, passed, problem } from "./check.ts";
import { cacheDir, dirname, join } from "../paths.ts";
import { checkPrivateDir, logFileProblem } from "../fs.ts";
import { decisionLogOff, decisionLogPath } from "../log.ts";
import { RunError } from "../errors.ts";
import { quoted } from "../text.ts";

/** The index cache, spool and decision log checks, in the order `doctor` prints them. */
export async function stateChecks(): Promise<Check[]> {
  return [cacheCheck(), await spoolCheck(), decisionLogCheck()];
}

function cacheCheck(): Check {
  if (Deno.env.get("TYHOOKS_NO_CACHE") === "1") {
    return passed("index cache", "turned off by TYHOOKS_NO_CACHE=1: every call loads the plugins");
  }
  let dir: string;
  try {
    // Where the spawn-time commands keep it (lib/cli/runner.ts).
    dir = join(cacheDir(), "tyhooks");
  } catch (error) {
    return problem("warn", "index cache", {
      detail: `not used: ${(error as Error).message}`,
      fix: "set HOME, or XDG_CACHE_HOME, for the calls tyhooks gets",
    });
  }
  const state = checkPrivateDir(dir, "the cache dir");
  if (state.ok || state.missing) {
    return passed("index cache", `used, in ${quoted(dir)}`);
  }
  return problem("warn", "index cache", {
    detail: `ignored: ${state.reason}, so every call loads the plugins`,
    fix: `chmod 700 ${quoted(dir)} (it must be yours), or remove it: rm -r ${quoted(dir)}`,
  });
}

async function spoolCheck(): Promise<Check> {
  const { spoolCounts } = await import("../spool/spool.ts");
  let counts: Awaited<ReturnType<typeof spoolCounts>>;
  try {
    counts = await spoolCounts();
  } catch (error) {
    // What fire --detach, spool and serve refuse: none of them runs or keeps events.
    const hint = error instanceof RunError ? error.hint : undefined;
    return problem("fail", "spool", {
      detail: (error as Error).message,
      fix: hint?.replace(/^hint: /, "") ?? "tyhooks spool list",
    });
  }
  const events = (n: number) => `${n} accepted ${n === 1 ? "event" : "events"}`;
  if (counts.pending > 0) {
    return problem("warn", "spool", {
      detail: `${events(counts.pending)} waiting to run (left by a stopped daemon or a ` +
        "detached run that died)",
      fix: "tyhooks spool run",
    });
  }
  if (counts.set_aside > 0) {
    const files = counts.set_aside === 1 ? "1 file" : `${counts.set_aside} files`;
    return problem("warn", "spool", {
      detail: `${files} set aside, never run`,
      fix: "tyhooks spool list, then remove what you do not want to keep",
    });
  }
  const running = counts.running > 0 ? `; ${events(counts.running)} running now` : "";
  return passed("spool", `nothing waiting${running}`);
}

// What each decision's append would find (lib/log.ts), looked at without making the log.
function decisionLogCheck(): Check {
  const name = "decision log";
  if (decisionLogOff()) {
    return passed(name, "turned off by TYHOOKS_DECISION_LOG=off: no decision is recorded");
  }
  let path: string;
  try {
    path = decisionLogPath();
  } catch (error) {
    return problem("warn", name, {
      detail: `cannot be written: ${(error as Error).message}`,
      fix: "set HOME, or XDG_STATE_HOME, for the calls tyhooks gets",
    });
  }
  const unusable = checkPrivateLog(path, "the decision log");
  if (unusable === null) return passed(name, `writable, at ${quoted(path)}`);
  const dir = dirname(path);
  return problem("warn", name, {
    detail: `cannot be written, so every decision warns: ${unusable.reason}`,
    fix: unusable.of === "dir"
      ? `chmod 700 ${quoted(dir)} (it must be yours), or TYHOOKS_DECISION_LOG=off`
      : `mv ${quoted(path)} ${quoted(`${path}.bad`)} (the next decision makes a new one)`,
  });
}

/**
 * Why `openPrivateLog` (lib/fs.ts, without `repair`) would not append to the log at `path`, and
 * whether its dir or the file is at fault; null when it would (a missing dir or file it would
 * make). Makes nothing and writes nothing: an existing file is opened for appending and closed.
 */
function checkPrivateLog(
  path: string,
  what: string,
): { reason: string; of: "dir" | "file" } | null {
  const dirState = checkPrivateDir(dirname(path), `${what}'s dir`);
  if (!dirState.ok) return dirState.missing ? null : { reason: dirState.reason, of: "dir" };
  let info: Deno.FileInfo;
  try {
    info = Deno.lstatSync(path);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return null;
    return { reason: `cannot check ${quoted(path)}: ${(error as Error).message}`, of: "file" };
  }
  const problem = logFileProblem(info, `${what} ${quoted(path)}`);
  if (problem !== null) return { reason: problem.reason, of: "file" };
  try {
    Deno.openSync(path, { append: true }).close();
  } catch (error) {
    return { reason: `cannot write ${quoted(path)}: ${(error as Error).message}`, of: "file" };
  }
  return null;
}
