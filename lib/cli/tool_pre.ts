import { type CommandContext, type CommandSpec, stringOption } from "./command.ts";
import { durationOption, makeRunner } from "./_shared.ts";
import { hookPaths, readToolCall, TOOL_CALL_OPTIONS } from "./_tool_call.ts";
import { UsageError } from "../errors.ts";
import type { FailurePolicy } from "../toolcalls/tool_hooks.ts";

/** Exit code of a blocked call. */
const EXIT_BLOCKED = 2;

export const spec: CommandSpec = {
  name: "tool pre",
  summary:
    "Ask the pre_tool_call hooks whether a tool call may run: --pre-hook scripts first, then plugins by name; the first block wins.",
  options: {
    ...TOOL_CALL_OPTIONS,
    "pre-hook": { type: "string", value: "PATH", multiple: true, help: "a pre hook script" },
    "on-failure": {
      type: "string",
      value: "block|allow",
      help: "what a failing hook means (default block: fail closed)",
    },
    timeout: { type: "string", value: "DUR", help: "per-hook timeout (default 30s)" },
    deadline: {
      type: "string",
      value: "DUR",
      help: "bound on the whole call (default: the per-hook timeout)",
    },
  },
  details: [
    'Prints {"action","reason"}. Exit 0 when allowed, 2 when blocked. A hook allows with exit 0',
    'and no output or {"action":"allow"}, blocks with {"action":"block","reason":...} or with',
    "exit 2 and the reason on stderr. A timeout, another exit code, malformed JSON or an unknown",
    "action follows --on-failure. No hook configured: allow.",
  ].join("\n"),
};

export async function run(ctx: CommandContext): Promise<number> {
  const call = readToolCall(ctx, "tool pre");
  const onFailure = stringOption(ctx.values, "on-failure") ?? "block";
  if (onFailure !== "block" && onFailure !== "allow") {
    throw new UsageError(
      `Invalid value "${onFailure}" for flag "--on-failure": expected block or allow`,
    );
  }
  const timeout = durationOption(ctx, "timeout");
  const deadlineMs = durationOption(ctx, "deadline");
  const runner = await makeRunner(ctx, { timeouts: timeout ? { tool: timeout } : {} });
  const { ToolHooks } = await import("../toolcalls/tool_hooks.ts");
  const hooks = new ToolHooks(runner, {
    preHooks: hookPaths(ctx, "pre-hook"),
    onFailure: onFailure as FailurePolicy,
  });
  const verdict = await hooks.preToolCall(call, { deadlineMs });
  await ctx.print(JSON.stringify(verdict) + "\n");
  return verdict.action === "block" ? EXIT_BLOCKED : 0;
}
