/**
 * `tyhooks services run` (supervise every plugin service) and `services list`.
 *
 * @module
 */

import { type CommandContext, type CommandModule, durationOption, UsageError } from "./types.ts";
import { loadIndex } from "./runner.ts";
import { stderrSink } from "../services/line_relay.ts";
import { listServices, startServices } from "../services/service_set.ts";
import { DEFAULT_STOP_TIMEOUT_MS, parseEnvEntry } from "../services/supervisor.ts";
import { nothingListed, table } from "./table.ts";
import { jsonText } from "../text.ts";

export const supervise: CommandModule = {
  spec: {
    summary:
      "Supervise every plugin service until SIGINT/SIGQUIT/SIGTERM/SIGHUP, then stop them all and exit 0 (1 when every service was given up).",
    options: {
      env: {
        type: "string",
        multiple: true,
        value: "K=V",
        help: "set a variable for every service (a service's own env still wins)",
      },
      "stop-timeout": {
        type: "string",
        value: "DUR",
        help: "time between SIGTERM and SIGKILL when stopping (default 5s)",
      },
    },
    handlesSignals: true,
    details: [
      'Each service runs "sh -c <command>" in its own process group from its plugin dir (or its',
      "cwd), with tyhooks' environment, then the --env pairs (TY_DB_PATH and TY_API_URL are passed",
      "through), then its own env. Its output lines go to stderr prefixed [plugin/service].",
      "",
      "Restarts (policy always, on-failure, never): 1s, 2s, 4s ... up to 30s, back to 1s after",
      "10s up; 5 failures in a row within 10s of starting and the service is given up.",
      "",
      "On SIGINT/SIGQUIT/SIGTERM/SIGHUP every group gets SIGTERM, then SIGKILL after --stop-timeout; exit 0.",
      "When no service is left running (each given up or ended by its policy), it exits by",
      "itself: 1 when every service was given up, else 0.",
    ].join("\n"),
  },
  async run(ctx: CommandContext): Promise<number> {
    const env = envPairs(ctx.values.env);
    const stopTimeoutMs = durationOption(ctx, "stop-timeout") ?? DEFAULT_STOP_TIMEOUT_MS;
    const index = await loadIndex(ctx);
    if (ctx.signal.aborted) return 0; // Told to stop before anything started.
    const set = startServices(index, {
      env,
      log: ctx.log,
      output: stderrSink(ctx.globals.logFormat),
    });
    if (set.size === 0) {
      // Nothing to supervise: waiting for a signal would only look like work.
      ctx.log.log("info", "No services to supervise", { plugins_dir: index.dir });
      return 0;
    }
    ctx.log.log("info", `Supervising ${set.size} service(s)`, { plugins_dir: index.dir });
    // Until told to stop, or until no service is left to supervise (each given up or ended).
    await new Promise<void>((resolve) => {
      if (ctx.signal.aborted) resolve();
      ctx.signal.addEventListener("abort", () => resolve(), { once: true });
      set.done.then(resolve);
    });
    await set.stop({ stopTimeoutMs });
    if (set.status().every((s) => s.state === "given_up")) {
      ctx.log.log("error", "Every service was given up");
      return 1;
    }
    return 0;
  },
};

function envPairs(value: CommandContext["values"][string]): Record<string, string> {
  const entries = Array.isArray(value) ? value : typeof value === "string" ? [value] : [];
  const env: Record<string, string> = {};
  for (const entry of entries) {
    const pair = parseEnvEntry(entry);
    if (pair === null) {
      throw new UsageError(
        `Invalid value "${entry}" for flag "--env": expected KEY=VALUE with KEY made of letters, ` +
          "digits and _ (not starting with a digit)",
        "hint: e.g. --env TY_API_URL=http://127.0.0.1:7000",
      );
    }
    env[pair[0]] = pair[1];
  }
  return env;
}

export const list: CommandModule = {
  spec: {
    summary:
      'List the services "services run" would supervise, from the manifests, starting nothing.',
    options: {
      json: {
        type: "boolean",
        help: 'print {"services":[{"plugin","name","command","cwd","restart"}]}',
      },
    },
  },
  async run(ctx: CommandContext): Promise<number> {
    const index = await loadIndex(ctx);
    const services = listServices(index);
    if (ctx.values.json) {
      await ctx.print(jsonText({ services }));
    } else if (services.length === 0) {
      nothingListed(ctx.log, "services", { where: index.dir });
    } else {
      const rows = services.map((s) => [s.plugin, s.name, s.restart, s.cwd, s.command]);
      await ctx.print(table(COLUMNS, rows));
    }
    return 0;
  },
};

// A multi-line command (a YAML block scalar) must not break the table, nor a terminal escape
// reach the terminal: control characters are shown escaped.
const COLUMNS = ["PLUGIN", "SERVICE", "RESTART", "CWD", "COMMAND"];
