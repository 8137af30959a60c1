/**
 * `tyhooks tool pre` and `tool post`, and what they share: the tool call, read from the flags or
 * from tyhooks' own request JSON (`--request -`). With `--claude` each is `tyhooks agent claude`.
 *
 * @module
 */

import {
  type CommandContext,
  type CommandModule,
  durationOption,
  EXIT,
  type OptionSpec,
  stringOption,
  UsageError,
} from "./types.ts";
import {
  consultedCall,
  consultOptions,
  failurePolicy,
  HOOK_TIMEOUT_OPTION,
  hookPaths,
  makeRunner,
  readCallInput,
} from "./runner.ts";
import { decodeJson, issueText } from "../wire/json.ts";
import type { PostToolCall } from "../consult/tool_hooks.ts";
import { jsonText } from "../text.ts";

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
 * `--claude` and `--on-failure`: with `--claude` either command is `tyhooks agent claude` for its
 * event. `tool pre` judges the call, so failures follow the policy; `tool post` only tells: it
 * returns at once and its hooks run in the background, where a failing one is logged.
 */
function claudeOptions(command: "pre" | "post"): Record<string, OptionSpec> {
  const contract = command === "pre"
    ? "exit 0 to allow, 2 to block (the reason alone on stderr), and 2 on any failure of " +
      "tyhooks itself unless --on-failure allow"
    : "exit 0 at once, the hooks running in the background (a failing hook is logged in " +
      "<cache>/tyhooks/detached.log)";
  return {
    claude: {
      type: "boolean",
      help: `be a Claude Code ${command === "pre" ? "PreToolUse" : "PostToolUse"} hook, as ` +
        `tyhooks agent claude is: read its hook JSON on stdin, ${contract}`,
    },
    "on-failure": {
      type: "string",
      value: "block|allow",
      help: command === "pre"
        ? "what a failing hook (and, with --claude, a failing tyhooks) means; default block"
        : "accepted for symmetry with tool pre: a post hook's failure is logged, never fatal",
    },
  };
}

/**
 * A tool call with the seed's fields filled in (`result` and `error` are empty for `tool pre`),
 * and an agent's when the request gave them.
 */
type ToolCallInput =
  & Required<Omit<PostToolCall, "cwd" | "agent">>
  & Pick<PostToolCall, "cwd" | "agent">;

/** Where a call's fields come from, in `tool post`'s terms (`tool pre` ignores the last two). */
const CALL_FLAGS = ["tool", "args", "platform", "user", "result", "error"];

// One source of the call: the flags, --request, or --claude (`agent claude` reads the call).
function checkSources(ctx: CommandContext): void {
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
}

/**
 * Reads the tool call: from the flags, or from tyhooks' own request JSON (`--request FILE|-`):
 * `{"tool","args","platform","user_id"}`, plus `result`, `error`.
 *
 * @throws {UsageError} When no tool is named, or the input is not a call.
 */
async function readCall(ctx: CommandContext, command: string): Promise<ToolCallInput> {
  const path = stringOption(ctx.values, "request");
  if (path === undefined) return fromFlags(ctx, command);
  const where = path === "-" ? "stdin" : `"${path}"`;
  const bytes = await readCallInput(ctx, { path, what: `--request input from ${where}` });
  const read = decodeJson(bytes, { object: true });
  if (!read.ok) {
    const what = read.step === "json" ? "Malformed JSON" : "Invalid input";
    throw new UsageError(`${what} on ${where} for --request: ${read.error}`);
  }
  const { PostToolCallSchema } = await import("../consult/tool_hooks.ts");
  const parsed = PostToolCallSchema.safeParse(read.value);
  if (!parsed.success) {
    throw new UsageError(
      `Invalid request for "${command}": ${issueText(parsed.error.issues[0], '"(request)"')}`,
      'hint: {"tool":"bash","args":{"command":"ls"},"platform":"cli","user_id":"me"}',
    );
  }
  return parsed.data;
}

/** `tool pre|post --claude`: `agent claude`, for their event when the input names none. */
async function asClaudeHook(ctx: CommandContext, event: string): Promise<number> {
  const { runAgent } = await import("./agent.ts");
  return await runAgent(ctx, "claude", { defaultEvent: event });
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
      json: {
        type: "boolean",
        help: 'report a hook\'s ask as "action":"ask" (exit 2) instead of the block it is here',
      },
    },
    details: [
      'Prints {"action","reason"}, plus "args" (the input to run instead) and "context" (text for',
      "the model) when hooks gave them. Exit 0 when allowed, 2 when blocked. A hook allows with",
      'exit 0 and no output or {"action":"allow"}, blocks with {"action":"block","reason":...} or',
      'with exit 2 and the reason on stderr, asks for a person with {"action":"ask"}: a block',
      'saying "needs approval: " here, as nobody can be asked. A timeout, another exit code,',
      "malformed JSON or an unknown action follows --on-failure. No hook configured: allow. With",
      "--claude, it answers as tyhooks agent claude does: see README, Coding agents.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const started = performance.now();
    checkSources(ctx);
    if (ctx.values.claude) return await asClaudeHook(ctx, "PreToolUse");
    const call = await readCall(ctx, "tool pre");
    const onFailure = failurePolicy(ctx);
    const { runner, consult } = await consultedCall(ctx, "tool", started);
    const { ToolHooks } = await import("../consult/tool_hooks.ts");
    const hooks = new ToolHooks(runner, { preHooks: hookPaths(ctx, "pre-hook"), onFailure });
    const canAsk = ctx.values.json === true;
    const verdict = await hooks.preToolCall(call, { ...consult, canAsk });
    const { action, reason, args, context } = verdict;
    await ctx.print(jsonText({ action, reason, args, context }));
    return action === "allow" ? 0 : EXIT.blocked.code;
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
      timeout: HOOK_TIMEOUT_OPTION,
      detach: {
        type: "boolean",
        help: "run in the background and return at once (log: <cache>/tyhooks/detached.log)",
      },
    },
    details: "Hooks read {hook,tool,args,result,platform,user_id} on stdin (plus error when " +
      "there is one). A failing hook is logged as a warning, never fatal: exit 0. With --claude " +
      "too.",
  },
  async run(ctx: CommandContext): Promise<number> {
    checkSources(ctx);
    if (ctx.values.claude) return await asClaudeHook(ctx, "PostToolUse");
    const call = await readCall(ctx, "tool post");
    failurePolicy(ctx); // A bad value is a usage error here too.
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
