import { type CommandContext, type CommandSpec, consultOptions } from "./command.ts";
import { makeConsultRunner } from "./_shared.ts";
import { failurePolicy, hookPaths, readToolCall, TOOL_CALL_OPTIONS } from "./_tool_call.ts";

/** Exit code of a blocked call. */
const EXIT_BLOCKED = 2;

export const spec: CommandSpec = {
  name: "tool pre",
  summary:
    "Ask the pre_tool_call hooks whether a tool call may run: all at once, decided in order (--pre-hook scripts first, then plugins by name); the first block wins.",
  options: {
    ...TOOL_CALL_OPTIONS,
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
};

export async function run(ctx: CommandContext): Promise<number> {
  const call = await readToolCall(ctx, "tool pre");
  const onFailure = failurePolicy(ctx);
  const { runner, consult } = await makeConsultRunner(ctx, "tool");
  const { ToolHooks } = await import("../consult/tool_hooks.ts");
  const hooks = new ToolHooks(runner, {
    preHooks: hookPaths(ctx, "pre-hook"),
    onFailure,
  });
  const verdict = await hooks.preToolCall(call, consult);
  // Claude Code's contract: the exit code is the answer, a block's reason goes to stderr.
  if (ctx.values.claude) {
    if (verdict.action === "block") ctx.printError(`${verdict.reason || "Blocked by tyhooks"}\n`);
  } else {
    await ctx.print(JSON.stringify(verdict) + "\n");
  }
  return verdict.action === "block" ? EXIT_BLOCKED : 0;
}
