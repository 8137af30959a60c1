/**
 * The flags `tool pre` and `tool post` share: the tool call, and the explicit hook scripts.
 *
 * @module
 */

import { resolve } from "node:path";
import { type CommandContext, type OptionSpec, stringOption } from "./command.ts";
import { UsageError } from "../errors.ts";
import type { ToolCall } from "../toolcalls/tool_schema.ts";

/** Flags describing the tool call. */
export const TOOL_CALL_OPTIONS: Record<string, OptionSpec> = {
  tool: { type: "string", value: "NAME", help: "the tool's name (required)" },
  args: { type: "string", value: "JSON", help: "the tool's arguments as JSON (default {})" },
  platform: { type: "string", value: "P", help: "the agent platform, passed to the hooks" },
  user: { type: "string", value: "U", help: "the user id, passed to the hooks as user_id" },
};

/**
 * Reads the tool call from the flags.
 *
 * @throws {UsageError} When `--tool` is missing or `--args` is not JSON.
 */
export function readToolCall(ctx: CommandContext, command: string): ToolCall {
  const tool = stringOption(ctx.values, "tool");
  if (tool === undefined || tool === "") {
    throw new UsageError(
      `Missing flag "--tool" for "${command}": the name of the tool being called`,
      `hint: tyhooks ${command} --tool bash --args '{"command":"ls"}'`,
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
  };
}

/** The explicit hook scripts of a repeatable flag, made absolute (they run from anywhere). */
export function hookPaths(ctx: CommandContext, flag: string): string[] {
  const value = ctx.values[flag];
  const paths = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  return paths.map((path) => resolve(path));
}
