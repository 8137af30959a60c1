/**
 * `tyhooks tool pre` and `tool post`, and what they share: the tool call, read from the flags,
 * from tyhooks' own request JSON (`--request -`), or from Claude Code's hook JSON (`--claude`);
 * the failure policy; and the explicit hook scripts.
 *
 * @module
 */

import { resolve } from "../path.ts";
import {
  type CommandContext,
  type CommandModule,
  durationOption,
  EXIT,
  type OptionSpec,
  stringOption,
  UsageError,
} from "./types.ts";
import { consultedCall, consultOptions, makeRunner } from "./runner.ts";
import { INPUT_CAPS, readBoundedBytes } from "../fs.ts";
import { issueText } from "../wire/json.ts";
import { clearableTimeout } from "../async.ts";
import { DEFAULT_TIMEOUTS } from "../events.ts";
import type { PostToolCall } from "../consult/tool_hooks.ts";

/** Flags describing the tool call. */
const TOOL_CALL_OPTIONS: Record<string, OptionSpec> = {
  tool: {
    type: "string",
    value: "NAME",
    help: "the tool's name (required unless --request or --claude)",
  },
  args: { type: "string", value: "JSON", help: "the tool's arguments as JSON (default {})" },
  platform: { type: "string", value: "P", help: "the agent platform, passed to the hooks" },
  user: { type: "string", value: "U", help: "the user id, passed to the hooks as user_id" },
  request: {
    type: "string",
    value: "FILE",
    help: "read the call as tyhooks' request JSON from FILE (- = stdin) instead of the flags",
  },
};

/**
 * `--claude` and `--on-failure`: `tool pre` judges the call, so its hooks' failures follow the
 * policy; `tool post` only tells, so its hooks' failures are logged, and the policy is about a
 * failure of tyhooks itself (main.ts reads it for every `--claude` line).
 */
function claudeOptions(command: "pre" | "post"): Record<string, OptionSpec> {
  const contract = command === "pre"
    ? "exit 0 to allow, 2 to block (reason on stderr)"
    : "exit 0 once the post hooks ran, a failing hook too";
  return {
    claude: {
      type: "boolean",
      help: `be a Claude Code ${command === "pre" ? "PreToolUse" : "PostToolUse"} hook: read ` +
        `its hook JSON on stdin, ${contract}, and 2 on any failure of tyhooks itself unless ` +
        "--on-failure allow; only errors are logged unless --log-level says otherwise",
    },
    "on-failure": {
      type: "string",
      value: "block|allow",
      help: command === "pre"
        ? "what a failing hook (and, with --claude, a failing tyhooks) means; default block"
        : "with --claude, what a failure of tyhooks itself means: block (exit 2, the " +
          "default) or allow (its own exit code)",
    },
  };
}

/** A tool call with every field filled in; `result` and `error` are empty for `tool pre`. */
type ToolCallInput = Required<PostToolCall>;

/** Where a call's fields come from, in `tool post`'s terms (`tool pre` ignores the last two). */
const CALL_FLAGS = ["tool", "args", "platform", "user", "result", "error"];

/**
 * Reads the tool call: from Claude Code's hook JSON on stdin (`--claude`), from tyhooks' own
 * request JSON (`--request FILE|-`), or from the flags.
 *
 * @throws {UsageError} When no tool is named, sources are mixed, or the input is not a call.
 */
async function readToolCall(ctx: CommandContext, command: string): Promise<ToolCallInput> {
  const request = stringOption(ctx.values, "request");
  const flags = CALL_FLAGS.filter((name) => ctx.values[name] !== undefined);
  if (ctx.values.claude && request !== undefined) {
    throw new UsageError('Flags "--claude" and "--request" cannot be used together');
  }
  if ((ctx.values.claude || request !== undefined) && flags.length > 0) {
    throw new UsageError(
      `Flag "--${flags[0]}" cannot be used with "--${ctx.values.claude ? "claude" : "request"}"`,
      "hint: the call is read from stdin (or the --request file) whole",
    );
  }
  if (ctx.values.claude) return fromClaudeCode(await readInput(ctx, "-", "--claude"));
  if (request !== undefined) {
    return await fromRequest(await readInput(ctx, request, "--request"), command);
  }
  return fromFlags(ctx, command);
}

function fromFlags(ctx: CommandContext, command: string): ToolCallInput {
  const tool = stringOption(ctx.values, "tool");
  if (tool === undefined || tool === "") {
    throw new UsageError(
      `Missing flag "--tool" for "${command}": the name of the tool being called`,
      `hint: tyhooks ${command} --tool bash --args '{"command":"ls"}', or --request -, or --claude`,
    );
  }
  const text = stringOption(ctx.values, "args");
  let args: unknown = {};
  if (text !== undefined) {
    try {
      args = JSON.parse(text);
    } catch (error) {
      throw new UsageError(`Invalid JSON for flag "--args": ${(error as Error).message}`);
    }
  }
  return {
    tool,
    args,
    platform: stringOption(ctx.values, "platform") ?? "",
    user_id: stringOption(ctx.values, "user") ?? "",
    result: stringOption(ctx.values, "result") ?? "",
    error: stringOption(ctx.values, "error") ?? "",
  };
}

async function readInput(ctx: CommandContext, path: string, flag: string): Promise<unknown> {
  const where = path === "-" ? "stdin" : `"${path}"`;
  // A caller that never ends its input must not hold the call open past its own bound (Claude
  // Code would then time the hook out, which lets the tool call through): the deadline, or else
  // the hooks' timeout.
  const boundMs = durationOption(ctx, "deadline") ?? durationOption(ctx, "timeout") ??
    DEFAULT_TIMEOUTS.tool;
  const timer = clearableTimeout(boundMs);
  let bytes: Uint8Array;
  try {
    const signal = AbortSignal.any([ctx.signal, timer.signal]);
    bytes = await readBoundedBytes(path, { signal, maxBytes: INPUT_CAPS.toolCall });
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    const why = timer.signal.aborted
      ? `it did not end within ${boundMs} ms`
      : (error as Error).message;
    throw new UsageError(`Cannot read ${flag} input from ${where}: ${why}`);
  } finally {
    timer.clear();
  }
  let text: string;
  try {
    // Bad UTF-8 is refused, not patched: a guard must judge the bytes the tool would get.
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`Invalid input on ${where} for ${flag}: not valid UTF-8`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`Malformed JSON on ${where} for ${flag}: ${(error as Error).message}`);
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new UsageError(`Invalid input on ${where} for ${flag}: expected a JSON object`);
  }
  return value;
}

/**
 * Claude Code's `PreToolUse`/`PostToolUse` input: `tool_name` -> tool, `tool_input` -> args,
 * `tool_response` -> result (JSON text unless a string), `session_id` -> user_id.
 */
function fromClaudeCode(value: unknown): ToolCallInput {
  const input = value as Record<string, unknown>;
  if (typeof input.tool_name !== "string" || input.tool_name === "") {
    throw new UsageError(
      'Invalid Claude Code hook input on stdin: "tool_name" must be a non-empty string',
      "hint: --claude is for Claude Code's PreToolUse and PostToolUse hooks",
    );
  }
  const response = input.tool_response;
  return {
    tool: input.tool_name,
    args: input.tool_input ?? {},
    platform: "claude-code",
    user_id: typeof input.session_id === "string" ? input.session_id : "",
    result: response === undefined || response === null
      ? ""
      : typeof response === "string"
      ? response
      : JSON.stringify(response),
    error: "",
  };
}

/** tyhooks' own request: `{"tool","args","platform","user_id"}`, plus `result`, `error`. */
async function fromRequest(value: unknown, command: string): Promise<ToolCallInput> {
  const { PostToolCallSchema } = await import("../consult/tool_hooks.ts");
  const parsed = PostToolCallSchema.safeParse(value);
  if (!parsed.success) {
    throw new UsageError(
      `Invalid request for "${command}": ${issueText(parsed.error.issues[0], '"(request)"')}`,
      'hint: {"tool":"bash","args":{"command":"ls"},"platform":"cli","user_id":"me"}',
    );
  }
  return parsed.data;
}

/** `--on-failure`: `block` (the default: fail closed) or `allow`. */
function failurePolicy(ctx: CommandContext): "block" | "allow" {
  const value = stringOption(ctx.values, "on-failure") ?? "block";
  if (value !== "block" && value !== "allow") {
    throw new UsageError(
      `Invalid value "${value}" for flag "--on-failure": expected block or allow`,
    );
  }
  return value;
}

/** The explicit hook scripts of a repeatable flag, made absolute (they run from anywhere). */
function hookPaths(ctx: CommandContext, flag: string): string[] {
  const value = ctx.values[flag];
  const paths = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  return paths.map((path) => resolve(path));
}

export const pre: CommandModule = {
  spec: {
    summary:
      "Ask the pre_tool_call hooks whether a tool call may run: all at once, decided in order (--pre-hook scripts first, then plugins by name); the first block wins.",
    options: {
      ...TOOL_CALL_OPTIONS,
      ...claudeOptions("pre"),
      "pre-hook": { type: "string", value: "FILE", multiple: true, help: "a pre hook script" },
      // ty has no tool hooks: no "as ty does" here.
      ...consultOptions("hook", "30s", "ask one hook after another"),
    },
    details: [
      'Prints {"action","reason"}. Exit 0 when allowed, 2 when blocked. A hook allows with exit 0',
      'and no output or {"action":"allow"}, blocks with {"action":"block","reason":...} or with',
      "exit 2 and the reason on stderr. A timeout, another exit code, malformed JSON or an unknown",
      "action follows --on-failure. No hook configured: allow. With --claude, nothing is printed on",
      "stdout: see README, Using tyhooks from Claude Code.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const started = performance.now();
    const call = await readToolCall(ctx, "tool pre");
    const onFailure = failurePolicy(ctx);
    const { runner, consult } = await consultedCall(ctx, "tool", started);
    const { ToolHooks } = await import("../consult/tool_hooks.ts");
    const hooks = new ToolHooks(runner, { preHooks: hookPaths(ctx, "pre-hook"), onFailure });
    const verdict = await hooks.preToolCall(call, consult);
    // Claude Code's contract: the exit code is the answer, a block's reason goes to stderr.
    if (ctx.values.claude) {
      if (verdict.action === "block") ctx.printError(`${verdict.reason || "Blocked by tyhooks"}\n`);
    } else {
      await ctx.print(JSON.stringify(verdict) + "\n");
    }
    return verdict.action === "block" ? EXIT.blocked.code : 0;
  },
};

export const post: CommandModule = {
  spec: {
    summary:
      "Tell the post_tool_call hooks (--post-hook scripts and plugins) about a finished tool call, all at once.",
    options: {
      ...TOOL_CALL_OPTIONS,
      ...claudeOptions("post"),
      result: { type: "string", value: "R", help: "the tool's result" },
      error: { type: "string", value: "E", help: "the tool's error, if it failed" },
      "post-hook": { type: "string", value: "FILE", multiple: true, help: "a post hook script" },
      timeout: { type: "string", value: "DUR", help: "per-hook timeout (default 30s)" },
      detach: {
        type: "boolean",
        help: "run in the background and return at once (log: <cache>/tyhooks/detached.log)",
      },
    },
    details: "Hooks read {hook,tool,args,result,platform,user_id} on stdin (plus error when " +
      "there is one). A failing hook is logged as a warning, never fatal: exit 0, with --claude " +
      "too.",
  },
  async run(ctx: CommandContext): Promise<number> {
    const call = await readToolCall(ctx, "tool post");
    failurePolicy(ctx); // Read by main.ts with --claude; a bad value is still a usage error.
    const timeout = durationOption(ctx, "timeout");
    if (ctx.values.detach) {
      // The call read here (from flags, a request or stdin) goes as flags: the background run
      // reads no stdin of the caller's.
      const { relaunchDetached } = await import("./detach.ts");
      const replaced = {
        tool: call.tool,
        args: JSON.stringify(call.args),
        platform: call.platform,
        user: call.user_id,
        result: call.result,
        error: call.error,
        // Absolute: the spooled command may run from another dir.
        "post-hook": hookPaths(ctx, "post-hook"),
        request: undefined,
        claude: undefined,
      };
      await relaunchDetached(ctx, ["tool", "post"], { replaced });
      return 0;
    }
    const runner = await makeRunner(ctx, { timeouts: timeout ? { tool: timeout } : {} });
    const { ToolHooks } = await import("../consult/tool_hooks.ts");
    const hooks = new ToolHooks(runner, { postHooks: hookPaths(ctx, "post-hook") });
    await hooks.postToolCall(call);
    return 0;
  },
};
