/**
 * The consulted commands that ask about a task: `route`, `place` and `hosts` (`tool pre` is in
 * tool.ts, with `tool post`).
 *
 * @module
 */

import { type CommandContext, type CommandModule, EXIT } from "./types.ts";
import { consultedCall, consultOptions, TASK_OPTIONS, taskOrEmpty } from "./runner.ts";
import type { RouteResult } from "../consult/route.ts";
import type { Logger } from "../log.ts";
import { TASK_PLACEMENT, TASK_ROUTE } from "../events.ts";
import { quoted } from "../text.ts";

export const route: CommandModule = {
  spec: {
    summary:
      "Ask the task.route handlers (all at once, decided in name order as ty decides) which profile the task runs under; the first non-empty decision wins.",
    options: {
      ...TASK_OPTIONS,
      json: { type: "boolean", help: 'print {"plugin","claude_config_dir","hold","reason"}' },
      force: {
        type: "boolean",
        help: "ask even for a task ty would not route (executor not claude, or its own config dir)",
      },
      ...consultOptions("router", "15s"),
    },
    details: [
      "Prints PLUGIN=name, CLAUDE_CONFIG_DIR=dir, HOLD=1 (when the task must wait) and REASON=text,",
      "one a line; nothing on stdout when no router decided, and an info line on stderr saying why.",
      "Routers that fail or time out are logged and skipped. As ty's executor, only tasks whose",
      "executor is empty or claude and that name no claude_config_dir are routed, unless --force.",
      "A leading ~ in the answered dir is expanded.",
      "Exit 0.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const task = await taskOrEmpty(ctx);
    const { runner, consult } = await consultedCall(ctx, "route");
    const force = ctx.values.force === true;
    const decision = await runner.route(task, { ...consult, force });
    if (decision.plugin === "") {
      // Loaded by the route itself already.
      const { whyNotRouted } = await import("../consult/route.ts");
      const asked = runner.handlers(TASK_ROUTE).length;
      const why = asked === 0
        ? `no plugin handles ${quoted(TASK_ROUTE)}`
        : (force ? null : whyNotRouted(task)) ??
          `${asked} ${asked === 1 ? "router" : "routers"} asked, none named a config dir or held`;
      ctx.log.log("info", `No router decided: ${why}`);
    }
    if (ctx.values.json) await ctx.print(JSON.stringify(decision) + "\n");
    else if (decision.plugin !== "") await ctx.print(keyValueLines(decision, ctx.log));
    return 0;
  },
};

export const place: CommandModule = {
  spec: {
    summary:
      "Ask the task.placement handlers (all at once, decided in name order as ty decides) on which host the task runs; the first named target wins.",
    options: {
      ...TASK_OPTIONS,
      "remote-required": {
        type: "boolean",
        help: "the task must run remotely: tell the handlers, and exit 3 when none names a target",
      },
      ...consultOptions("handler", "5s"),
    },
    details: [
      'Prints {"target","workdir","reason","handler"}; an empty target means "run locally".',
      "Exit 0 with empty stdout is a deliberate local answer naming its handler, returned only when",
      "no handler names a target. Handlers that fail, time out or answer badly are logged at error",
      "level and count as local.",
      "Exit 0; 3 with --remote-required when no handler named a target.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const task = await taskOrEmpty(ctx);
    const remoteRequired = ctx.values["remote-required"] === true;
    const { runner, consult } = await consultedCall(ctx, "placement");
    const placement = await runner.resolvePlacement(
      { ...task, remote_required: remoteRequired },
      consult,
    );
    await ctx.print(JSON.stringify(placement) + "\n");
    if (remoteRequired && placement.target === "") {
      ctx.log.log("error", "No placement handler named a target, and --remote-required was given", {
        handlers: runner.handlers(TASK_PLACEMENT).length,
      });
      return EXIT.noTarget.code;
    }
    return 0;
  },
};

export const hosts: CommandModule = {
  spec: {
    summary:
      "Ask every task.hosts handler where the task could run, and print their merged candidates.",
    options: { ...TASK_OPTIONS, ...consultOptions("handler", "5s") },
    details: [
      'Prints {"hosts":[{"name","target","workdir","detail"}]}. Every handler is asked (all at',
      "once); the lists are merged in plugin-name order, a duplicate target keeping the first entry.",
      "An entry's empty target is filled from its name and the other way round; entries with",
      "neither are dropped. A failing handler contributes nothing (logged). Exit 0.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const task = await taskOrEmpty(ctx);
    const { runner, consult } = await consultedCall(ctx, "hosts");
    await ctx.print(JSON.stringify(await runner.listHosts(task, consult)) + "\n");
    return 0;
  },
};

function keyValueLines(decision: RouteResult, log: Logger): string {
  const line = (key: string, value: string) => `${key}=${oneLine(key, value, log)}`;
  const lines = [
    line("PLUGIN", decision.plugin),
    line("CLAUDE_CONFIG_DIR", decision.claude_config_dir),
  ];
  if (decision.hold) lines.push("HOLD=1");
  lines.push(line("REASON", decision.reason));
  return lines.join("\n") + "\n";
}

// Every character some line splitter takes as a line end (Python's str.splitlines, Unicode's
// line and paragraph separators, JavaScript's \u2028/\u2029): a value holding one could inject a
// KEY=VALUE line into whatever parses this output.
// deno-lint-ignore no-control-regex -- matching control characters is the point
const LINE_END = /[\n\v\f\r\x1c-\x1e\x85\u2028\u2029]/;

function oneLine(key: string, value: string, log: Logger): string {
  const at = value.search(LINE_END);
  if (at === -1) return value;
  log.log("warn", `Cut ${key} at a line-end character, so that no line can be injected`, {
    key,
    kept: value.slice(0, at),
  });
  return value.slice(0, at);
}
