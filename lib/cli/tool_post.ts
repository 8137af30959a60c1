import type { CommandContext, CommandSpec } from "./command.ts";
import { durationOption, makeRunner, relaunchDetached } from "./_shared.ts";
import { failurePolicy, hookPaths, readToolCall, TOOL_CALL_OPTIONS } from "./_tool_call.ts";

export const spec: CommandSpec = {
  name: "tool post",
  summary:
    "Tell the post_tool_call hooks (--post-hook scripts and plugins) about a finished tool call, all at once.",
  options: {
    ...TOOL_CALL_OPTIONS,
    result: { type: "string", value: "R", help: "the tool's result" },
    error: { type: "string", value: "E", help: "the tool's error, if it failed" },
    "post-hook": { type: "string", value: "FILE", multiple: true, help: "a post hook script" },
    timeout: { type: "string", value: "DUR", help: "per-hook timeout (default 30s)" },
    detach: {
      type: "boolean",
      help: "run in the background and return at once (log: <cache>/tyhooks/detached.log)",
    },
  },
  details:
    "Hooks read {hook,tool,args,result,platform,user_id} on stdin (plus error when there is one). Failures are logged, never fatal. Exit 0.",
};

export async function run(ctx: CommandContext): Promise<number> {
  const call = await readToolCall(ctx, "tool post");
  failurePolicy(ctx); // Read by main.ts with --claude; a bad value is still a usage error.
  const timeout = durationOption(ctx, "timeout");
  if (ctx.values.detach) {
    // The call read here (from flags, a request or stdin) goes as flags: the background run
    // reads no stdin of the caller's.
    await relaunchDetached(ctx, ["tool", "post"], undefined, {
      tool: call.tool,
      args: JSON.stringify(call.args),
      platform: call.platform,
      user: call.user_id,
      result: call.result,
      error: call.error,
      request: undefined,
      claude: undefined,
    });
    return 0;
  }
  const runner = await makeRunner(ctx, { timeouts: timeout ? { tool: timeout } : {} });
  const { ToolHooks } = await import("../consult/tool_hooks.ts");
  const hooks = new ToolHooks(runner, { postHooks: hookPaths(ctx, "post-hook") });
  await hooks.postToolCall(call);
  return 0;
}
