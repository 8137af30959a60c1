/**
 * `tyhooks spool list` and `spool run`: the accepted work not yet run, and running it now, each
 * entry as the command line it stands for, in this process, in acceptance order.
 *
 * @module
 */

import type { CommandContext, CommandModule } from "./types.ts";
import type { FoundEntry, SetAside, Spool, SpoolDoc } from "../spool/spool.ts";
import { nothingListed, table } from "./table.ts";
import { jsonText } from "../text.ts";

/** The commands a spool entry may run: the ones whose work is spooled. */
const SPOOLABLE = [["fire"], ["status-change"], ["tool", "post"], ["agent"]];

// The spool, null when there is no spool dir (nothing was ever spooled, and looking makes none).
async function openSpool(ctx: CommandContext): Promise<{ spool: Spool | null; dir: string }> {
  const { Spool, spoolDir } = await import("../spool/spool.ts");
  const spool = Spool.openExisting(undefined, { log: ctx.log });
  return { spool, dir: spool?.dir ?? spoolDir() };
}

export const list: CommandModule = {
  spec: {
    summary: "List the accepted events not yet run: waiting (left by a stopped daemon or a " +
      "detached run that died), running (held by a live daemon or run), and set aside.",
    options: {
      json: {
        type: "boolean",
        help: 'print {"entries": [{"name", "state", "accepted_at", "what", "source", ' +
          '"plugins_dir", "bytes"}], "set_aside": [{"name", "reason"}]}',
      },
    },
    details: "The spool is <state>/tyhooks/spool (<state>: $XDG_STATE_HOME, else " +
      "$HOME/.local/state). A set-aside file (corrupt, unsafe, or failed to run) is never run: " +
      "read it, then delete it.",
  },
  async run(ctx: CommandContext): Promise<number> {
    const { spool, dir } = await openSpool(ctx);
    const found = spool === null
      ? { entries: [], setAside: [] }
      : await spool.scan({ running: true, setAside: false });
    const entries = found.entries.map((e) => ({
      name: e.name,
      state: e.state,
      accepted_at: e.doc.accepted_at,
      what: e.doc.what,
      source: "request" in e.doc ? "daemon" : "detached",
      plugins_dir: pluginsDirOf(e.doc),
      bytes: e.bytes,
    }));
    if (ctx.values.json) {
      await ctx.print(jsonText({ entries, set_aside: found.setAside }));
    } else if (entries.length === 0 && found.setAside.length === 0) {
      nothingListed(ctx.log, "spooled events", { where: dir });
    } else {
      const rows = [
        ...entries.map((e) => [e.name, e.state, e.accepted_at, e.what, e.source]),
        ...found.setAside.map((s) => [s.name, `set aside (${s.reason})`, "", "", ""]),
      ];
      await ctx.print(table(["ENTRY", "STATE", "ACCEPTED", "WHAT", "FROM"], rows));
    }
    return 0;
  },
};

export const run: CommandModule = {
  spec: {
    summary: "Run the waiting spooled events now (all, or the ENTRY names given), in the order " +
      "they were accepted, one at a time; each is removed once its hooks have run.",
    args: "[ENTRY...]",
    positionals: [0, 1000],
    options: {
      json: {
        type: "boolean",
        help: 'print {"ran": [{"name", "what", "exit_code"}], "set_aside": [{"name", ' +
          '"reason"}], "left": [name]}',
      },
    },
    details: "An event runs as the command it stands for (fire, status-change, tool post) with " +
      "the plugins dir it was accepted for; its hooks' output goes to stderr. Events held by a " +
      "live daemon or run are left to it. Interrupted, the event running stays spooled. Exit " +
      "1 when an event could not run (it is set aside), else 0.",
  },
  async run(ctx: CommandContext): Promise<number> {
    const { spool } = await openSpool(ctx);
    const names = ctx.positionals.length > 0 ? ctx.positionals : undefined;
    const result = spool === null
      ? { ran: [], set_aside: [], left: [] }
      : await runSpooled(ctx, spool, { names, cut: ctx.signal });
    if (ctx.values.json) await ctx.print(jsonText(result));
    return result.set_aside.length > 0 ? 1 : 0;
  },
};

/** What {@linkcode runSpooled} did. */
export interface SpooledRuns {
  ran: { name: string; what: string; exit_code: number }[];
  set_aside: SetAside[];
  /** Not run, or cut: still spooled. */
  left: string[];
}

/**
 * Runs the waiting entries of `spool` (only `names`, when given) in acceptance order, one at a
 * time, each as its command line in this process; closes the spool when done. `ctx.signal` stops
 * starting more; `cut` ends the one running (it stays spooled).
 */
export async function runSpooled(
  ctx: CommandContext,
  spool: Spool,
  options: { names?: string[]; cut: AbortSignal },
): Promise<SpooledRuns> {
  const result: SpooledRuns = { ran: [], set_aside: [], left: [] };
  try {
    const wanted = options.names === undefined ? undefined : new Set(options.names);
    const found = await spool.scan({ only: wanted });
    result.set_aside.push(...found.setAside);
    const entries = found.entries.filter((e) => e.state === "pending");
    if (wanted !== undefined) {
      for (const name of wanted) {
        if (entries.every((e) => e.name !== name)) {
          ctx.log.log("info", "Spooled event already run or taken by another run", { entry: name });
        }
      }
    }
    for (const one of entries) {
      if (ctx.signal.aborted) {
        result.left.push(one.name);
        continue;
      }
      await runOne(ctx, spool, one, options.cut, result);
    }
  } finally {
    await spool.close();
  }
  const ran = result.ran.length;
  if (ran + result.set_aside.length + result.left.length > 0) {
    ctx.log.log("info", `Ran ${ran} spooled ${ran === 1 ? "event" : "events"}`, {
      set_aside: result.set_aside.length,
      left: result.left.length,
    });
  }
  return result;
}

async function runOne(
  ctx: CommandContext,
  spool: Spool,
  found: FoundEntry,
  cut: AbortSignal,
  result: SpooledRuns,
): Promise<void> {
  const entry = await spool.claim(found);
  if (entry === null) return; // Another runner took it first.
  const setAside = async (why: string) => {
    await spool.setAside(entry, "failed", why);
    result.set_aside.push({ name: entry.name, reason: "failed" });
  };
  const line = commandLine(ctx, found.doc);
  if (typeof line === "string") return await setAside(line);
  let code: number | undefined;
  try {
    code = await ctx.runLine(line, cut);
  } catch (error) {
    if (!cut.aborted) return await setAside((error as Error).message);
  }
  // Cut (thrown or not), its hooks did not finish: it runs again later.
  if (code === undefined || cut.aborted) {
    await spool.release(entry);
    result.left.push(entry.name);
    return;
  }
  await spool.finish(entry);
  result.ran.push({ name: entry.name, what: found.doc.what, exit_code: code });
}

/** The command line an entry runs, with this run's log settings; or why it cannot run. */
function commandLine(ctx: CommandContext, doc: SpoolDoc): string[] | string {
  const line = "args" in doc ? doc.args : fromRequest(doc);
  if (typeof line === "string") return line;
  const words = SPOOLABLE.find((w) => w.every((word, i) => line[i] === word));
  if (words === undefined) return `"${line.slice(0, 2).join(" ")}" is not spooled work`;
  const end = line.indexOf("--");
  const flags = end === -1 ? line.slice(words.length) : line.slice(words.length, end);
  if (flags.some((f) => f === "--detach" || f.startsWith("--detach="))) {
    return "a spooled command cannot detach";
  }
  const own = (f: string) => !f.startsWith("--log-format=") && !f.startsWith("--log-level=");
  return [
    ...words,
    `--log-format=${ctx.globals.logFormat}`,
    `--log-level=${ctx.globals.logLevel}`,
    ...flags.filter(own),
    ...(end === -1 ? [] : line.slice(end)),
  ];
}

/** A daemon's request as the command line that does the same work. */
function fromRequest(doc: Extract<SpoolDoc, { request: unknown }>): string[] | string {
  const body = (doc.request.body ?? {}) as Record<string, unknown>;
  const dirs = [`--plugins-dir=${doc.plugins_dir}`];
  if (doc.hooks_dir !== null) dirs.push(`--hooks-dir=${doc.hooks_dir}`);
  const task = `--task-json=${JSON.stringify(body.task ?? {})}`;
  const message = typeof body.message === "string" ? [`--message=${body.message}`] : [];
  const path = doc.request.path;
  if (path.startsWith("/v1/events/")) {
    let event: string;
    try {
      event = decodeURIComponent(path.slice("/v1/events/".length));
    } catch {
      return `the event in "${path}" cannot be decoded`;
    }
    return ["fire", ...dirs, task, ...message, "--", event];
  }
  if (path === "/v1/status-change" && typeof body.status === "string") {
    return ["status-change", ...dirs, task, ...message, "--", body.status];
  }
  if (path === "/v1/tool/post" && typeof body.tool === "string") {
    const text = (name: string) => typeof body[name] === "string" ? body[name] as string : "";
    return [
      "tool",
      "post",
      ...dirs,
      `--tool=${body.tool}`,
      `--args=${JSON.stringify(body.args ?? {})}`,
      `--platform=${text("platform")}`,
      `--user=${text("user_id")}`,
      `--result=${text("result")}`,
      `--error=${text("error")}`,
    ];
  }
  return `"${path}" is not a request tyhooks spools`;
}

/** The plugins dir an entry runs with, when it names one. */
function pluginsDirOf(doc: SpoolDoc): string | null {
  if ("request" in doc) return doc.plugins_dir;
  const flag = doc.args.find((a) => a.startsWith("--plugins-dir="));
  return flag === undefined ? null : flag.slice("--plugins-dir=".length);
}
