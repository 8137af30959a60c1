/**
 * `tyhooks agent AGENT`: the one command a coding agent's hooks run, for every event. It reads
 * the agent's hook JSON on stdin, judges what is consulted (a tool call, a prompt, a stop) here
 * and answers in the agent's contract; what is notified goes to a background run at once. It
 * never fails open: for a consulted event any failure of tyhooks itself is the agent's block.
 *
 * @module
 */

import {
  type CommandContext,
  type CommandModule,
  durationOption,
  stringOption,
  UsageError,
} from "./types.ts";
import {
  consultedCall,
  consultOptions,
  failurePolicy,
  hookPaths,
  makeRunner,
  readCallInput,
} from "./runner.ts";
import { AGENTS, type AgentSpec, agentSpec } from "../agents/table.ts";
import {
  agentEvent,
  type AgentRequest,
  commandAnswer,
  decideAgentEvent,
  parseHookJson,
  readAgentRequest,
  tellAgentEvent,
} from "../agents/hook.ts";
import { AGENT_DEADLINE_MS, readHookInput } from "../agents/daemon_client.ts";
import { clearableTimeout } from "../async.ts";
import { silentLogger } from "../log.ts";
import { closest, quoted } from "../text.ts";
import type { ToolVerdict } from "../consult/tool_hooks.ts";

const NAMES = AGENTS.map((agent) => agent.name);

export const agent: CommandModule = {
  spec: {
    summary:
      "Be a coding agent's hook command for every event it hooks: read its hook JSON on stdin, run the plugin hooks of the event it maps to, and answer in the agent's own contract.",
    args: "AGENT",
    positionals: [1, 1],
    options: {
      "on-failure": {
        type: "string",
        value: "block|allow",
        help:
          "what a failing hook, or a failing tyhooks, means for a consulted event; default block",
      },
      "pre-hook": { type: "string", value: "FILE", multiple: true, help: "a pre hook script" },
      "post-hook": { type: "string", value: "FILE", multiple: true, help: "a post hook script" },
      ...consultOptions("hook", "30s", "ask one hook after another"),
      deadline: {
        type: "string",
        value: "DUR",
        help: "bound on the whole call, from tyhooks' start (default 30s)",
      },
      wait: {
        type: "boolean",
        help: "run a notified event's hooks before returning, rather than in the background",
      },
      "hook-json": {
        type: "string",
        value: "JSON",
        help: "the agent's hook JSON (default: read on stdin)",
      },
      event: {
        type: "string",
        value: "NAME",
        help: "the agent's event when its hook JSON has no hook_event_name",
      },
    },
    handlesSignals: true,
    details: [
      `AGENT is one of ${NAMES.join(", ")}. The event comes from the input's hook_event_name: a`,
      "tool call (pre_tool_call), a prompt (agent.prompt) or a stop (agent.stop) is judged and",
      "answered; any other event (post_tool_call, agent.session_start ...) is handed to a",
      "background run, as --detach does, and the command exits 0 at once, printing nothing;",
      "another agent's tool call or prompt (PreToolUse to agent gemini) blocks, naming it.",
      "\n\nAn allow prints nothing and exits 0. A block exits 2 with the reason alone on",
      "stderr. An ask, rewritten arguments or context are answered in the agent's own fields",
      "where it honours them; an ask it cannot put to the user blocks, the reason starting",
      '"needs approval: ". For a consulted event, every failure of tyhooks itself (input that',
      "is not the agent's JSON, an unknown agent, a usage error, a crash, SIGINT/SIGQUIT/SIGTERM,",
      "the --deadline) blocks the same way, unless --on-failure allow. Logs stay off stderr (the",
      "model reads it) unless --log-level is given. See README, Coding agents.",
    ].join(" ").replace(/ ?\n\n ?/g, "\n\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    return await runAgent(ctx, ctx.positionals[0]);
  },
};

/** Options of {@linkcode runAgent}. */
export interface AgentRunOptions {
  /** The event when the input names none (`tool pre --claude` knows it is PreToolUse). */
  defaultEvent?: string;
}

/**
 * Answers one hook call of agent `name` (`tyhooks agent NAME`, and `tool pre|post --claude`):
 * returns the exit code, having printed the answer. Never throws once the line is parsed.
 */
export async function runAgent(
  context: CommandContext,
  name: string,
  { defaultEvent }: AgentRunOptions = {},
): Promise<number> {
  // The deadline counts from the process's start (performance.now()'s origin): the time the fast
  // path spent with a daemon that then failed is part of it.
  const started = 0;
  const deadline = context.values.deadline ?? `${AGENT_DEADLINE_MS}ms`;
  const ctx: CommandContext = { ...context, values: { ...context.values, deadline } };
  // The model reads stderr: only the reason of a block goes there, unless logs are asked for.
  const quiet = ctx.values["log-level"] === undefined && ctx.values.wait !== true;
  const log = quiet ? silentLogger : ctx.log;
  // Known once the event is: a failure past that point of an event only told is no block.
  let notified: string | undefined;
  let onFailure: "block" | "allow" = "block";
  try {
    onFailure = failurePolicy(ctx);
    const spec = knownAgent(name);
    const payload = await readPayload(ctx, spec);
    const options = { defaultEvent: stringOption(ctx.values, "event") ?? defaultEvent };
    const named = agentEvent(spec, payload, options);
    if (!named.consulted) notified = named.event;
    const request = readAgentRequest(spec, payload, { named });
    if (!request.consulted) {
      await notify({ ...ctx, log }, request, payload);
      return 0;
    }
    const answer = await decide({ ...ctx, log }, request, { onFailure, started });
    const rendered = commandAnswer(request, answer);
    if (rendered.dropped) log.log("debug", `Context dropped: ${rendered.dropped}`);
    if (rendered.answer.stdout) await ctx.print(rendered.answer.stdout);
    if (rendered.answer.stderr) ctx.printError(rendered.answer.stderr);
    return rendered.answer.exitCode;
  } catch (error) {
    const message = ctx.signal.aborted
      ? (ctx.signal.reason as Error)?.message ?? "Interrupted"
      : (error as Error)?.message ?? String(error);
    if (notified !== undefined) {
      // Where a background run of it would have logged, when stderr is the model's.
      const where = quiet ? await (await import("./detach.ts")).detachedLogger() : log;
      where.log("error", `Agent event ${quoted(notified)} not handed on: ${message}`);
      return 0;
    }
    if (onFailure === "allow") {
      log.log("warn", `${message}; allowed by the failure policy`);
      return 0;
    }
    ctx.printError(`tyhooks: ${message}\n`);
    return 2;
  }
}

/** The agent `name` names, or a usage error with the one probably meant (`agent`, `agent install`). */
export function knownAgent(name: string): AgentSpec {
  const spec = agentSpec(name);
  if (spec !== undefined) return spec;
  const near = closest(name, NAMES);
  throw new UsageError(
    `Unknown agent ${quoted(name)}`,
    near === undefined
      ? `hint: the agents are ${NAMES.join(", ")}`
      : `hint: did you mean ${quoted(near)}?`,
  );
}

/**
 * The hook JSON, from `--hook-json` or stdin: bounded in size (a Write carries a whole file) and
 * in time (an agent that never ends its input must not hold the call past its own bound).
 */
async function readPayload(ctx: CommandContext, spec: AgentSpec): Promise<Record<string, unknown>> {
  const inline = stringOption(ctx.values, "hook-json");
  if (inline !== undefined) return parseHookJson(new TextEncoder().encode(inline), "--hook-json");
  // The fast path may have read it already, trying the daemon.
  const bytes = await readCallInput(ctx, {
    what: `the ${spec.title} hook input on stdin`,
    read: readHookInput(),
  });
  return parseHookJson(bytes, "stdin");
}

/**
 * The guards' decision on a consulted event, within `--deadline`: past it the hooks are ended
 * and the call blocks (the agent would otherwise time the hook out, and run the call).
 */
async function decide(
  ctx: CommandContext,
  request: AgentRequest,
  { onFailure, started }: { onFailure: "block" | "allow"; started: number },
): Promise<ToolVerdict> {
  // Set by runAgent when the line gives none.
  const deadlineMs = durationOption(ctx, "deadline")!;
  const timer = clearableTimeout(Math.max(0, started + deadlineMs - performance.now()));
  const signal = AbortSignal.any([ctx.signal, timer.signal]);
  const late = new Promise<never>((_, reject) => {
    signal.addEventListener("abort", () => reject(signal.reason), { once: true });
  });
  const ask = async () => {
    const { runner, consult } = await consultedCall({ ...ctx, signal }, "tool", started);
    const preHooks = hookPaths(ctx, "pre-hook");
    return await decideAgentEvent(runner, request, { preHooks, onFailure, consult });
  };
  try {
    const answer = await Promise.race([ask(), late]);
    // A decision reached while being interrupted is no decision.
    signal.throwIfAborted();
    return answer;
  } catch (error) {
    if (timer.signal.aborted && !ctx.signal.aborted) {
      throw new Error(`No decision within the ${deadlineMs} ms deadline`);
    }
    throw error;
  } finally {
    timer.clear();
  }
}

/**
 * A notified event: handed to a background run (the agent waits for its hooks), or with `--wait`
 * (what the background run is given) its hooks run here.
 */
async function notify(
  ctx: CommandContext,
  request: AgentRequest,
  payload: Record<string, unknown>,
): Promise<void> {
  if (ctx.values.wait !== true) {
    const { relaunchDetached } = await import("./detach.ts");
    // Only the agent's own flags go on: `tool post --claude` hands on its call the same way.
    const values: CommandContext["values"] = {
      "post-hook": hookPaths(ctx, "post-hook"),
      timeout: ctx.values.timeout,
      "hook-json": JSON.stringify(payload),
      event: request.event,
      wait: true,
    };
    // The agent waits for this hook: return once the work is spooled and its run started.
    await relaunchDetached({ ...ctx, values, positionals: [request.agent.name] }, ["agent"], {
      wait: false,
    });
    return;
  }
  const timeout = durationOption(ctx, "timeout");
  const bounds = timeout ? { [request.type === "tool" ? "tool" : "event"]: timeout } : {};
  const runner = await makeRunner(ctx, { timeouts: bounds });
  await tellAgentEvent(runner, request, { postHooks: hookPaths(ctx, "post-hook") });
}
