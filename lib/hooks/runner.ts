/**
 * The Runner: fires events, maps status changes (ty's OnStatusChange), runs actions, and asks the
 * consulted hooks, over one plugin index. Every script goes through `runScript`; failures are
 * records and log lines, never exceptions.
 *
 * @module
 */

import { join } from "../paths.ts";
import { excerpt } from "../text.ts";
import { checkDuration, type Limit } from "../async.ts";
import type { Plugin, PluginIndex } from "../plugins/types.ts";
import { type Logger, silentLogger } from "../log.ts";
import type { Task } from "../wire/task.ts";
import { NotFoundError } from "../errors.ts";
import {
  DEFAULT_TIMEOUTS,
  eventSpec,
  statusEvent,
  TASK_HOSTS,
  TASK_PLACEMENT,
  TASK_ROUTE,
  type Timeouts,
} from "../events.ts";
import { DEFAULT_GRACE_MS } from "../process/group.ts";
import {
  failureReason,
  type RunOptions,
  type RunRecord,
  type RunResult,
  runScript,
  succeeded,
  toRecord,
} from "../process/run_script.ts";
import type { AskHandler, AskRequest, ConsultOptions } from "../consult/consult.ts";
import type { RouteOptions, RouteResult } from "../consult/route.ts";
import type { HostsList, Placement, PlacementInfo } from "../consult/placement.ts";

/** Options of {@linkcode Runner}. */
export interface RunnerOptions {
  /** Legacy hooks dir (`<hooks-dir>/<event>`); none when omitted. */
  hooksDir?: string;
  /** Where failures are reported; default silent. */
  log?: Logger;
  /** Per-call timeouts; defaults from SPEC. */
  timeouts?: Partial<Timeouts>;
  /** SIGTERM-to-SIGKILL grace; default 500 ms. */
  graceMs?: number;
  /** Captured bytes per stream; default 1 MiB. */
  maxOutputBytes?: number;
  /** Aborting it terminates every running script (tyhooks is shutting down). */
  signal?: AbortSignal;
  /** Gate around every script run, e.g. the daemon's process limit. */
  limit?: Limit;
  /** How a consulted handler is asked; default: its script is run once per question. */
  ask?: AskHandler;
  /** How a plugin's notified hook (event, `post_tool_call`) is told; default: run once. */
  notify?: AskHandler;
}

/** Options of {@linkcode Runner.runAction}. */
export interface ActionOptions extends Pick<RunOptions, "args" | "onOutput" | "stdin"> {
  /** The task whose variables the action gets; none when omitted. */
  task?: Task;
}

/** What a status change did. */
export interface StatusChangeResult {
  /** The event fired, or null when the status fires nothing. */
  event: string | null;
  /** One record per script the event ran. */
  runs: RunRecord[];
}

/**
 * `line` (a `JSON.stringify` object and its newline) with `"id":"<id>"` first, where a shell or awk
 * loop finds it without a JSON parser; spliced in, not re-serialised, as the line may be large.
 */
export function withRequestId(line: string, id: string): string {
  if (!line.startsWith("{")) return line;
  const empty = line.startsWith("{}");
  return `{"id":"${id}"${empty ? "" : ","}${line.slice(1)}`;
}

// One-shot runs get an id as persistent ones do, so one script serves both.
let lastRequestId = 0;

/** The variables every plugin script gets. */
export function pluginEnv(plugin: Plugin): Record<string, string> {
  return { TASK_PLUGIN_NAME: plugin.name, TASK_PLUGIN_DIR: plugin.dir };
}

/**
 * Runs the hooks and actions of a plugin index. Requires `--allow-run`, `--allow-read`,
 * `--allow-env`.
 *
 * @example
 * ```ts
 * import { Runner } from "./runner.ts";
 * const runner = new Runner({ dir: "/none", plugins: [], warnings: [] });
 * console.assert((await runner.fire("task.done")).length === 0);
 * console.assert(!runner.handlesRoute() && runner.timeouts.route === 15_000);
 * ```
 */
export class Runner {
  /** The plugin index this runner works from. */
  readonly index: PluginIndex;
  /** Effective timeouts. */
  readonly timeouts: Timeouts;
  /** Where failures are reported. */
  readonly log: Logger;
  #options: RunnerOptions;

  /** A runner over `index`; it starts nothing until called. */
  constructor(index: PluginIndex, options: RunnerOptions = {}) {
    this.index = index;
    this.#options = options;
    this.log = options.log ?? silentLogger;
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
    for (const [kind, ms] of Object.entries(this.timeouts)) checkDuration(ms, `${kind} timeout`);
    if (options.graceMs !== undefined) checkDuration(options.graceMs, "graceMs");
  }

  /** The SIGTERM-to-SIGKILL grace scripts get, in ms. */
  get graceMs(): number {
    return this.#options.graceMs ?? DEFAULT_GRACE_MS;
  }

  /** Aborted when tyhooks shuts down: every script still running is terminated. */
  get signal(): AbortSignal | undefined {
    return this.#options.signal;
  }

  /**
   * The timeout of `plugin`'s hook for `event` (null: the legacy hook): the explicit one given to
   * the runner (`--timeout`), else the hook's own `timeout` setting, else the default. Which of
   * the {@linkcode Timeouts} applies is the event's own, unless `kind` says.
   */
  timeoutFor(
    event: string,
    plugin: Plugin | null,
    kind: keyof Timeouts = eventSpec(event).timeout,
  ): number {
    // Read directly rather than through hook_settings.ts: the warm path stays a few modules.
    const own = plugin?.settings?.[event]?.timeoutMs;
    return this.#options.timeouts?.[kind] ?? own ?? this.timeouts[kind];
  }

  /**
   * Asks one consulted handler (see the consult loop): through the `ask` option when given (the
   * daemon's persistent hooks), else by running its script once.
   */
  ask(request: AskRequest): Promise<RunResult> {
    const once = (r: AskRequest) =>
      this.run(r.script, {
        cwd: r.plugin?.dir,
        env: r.plugin ? { ...r.env, ...pluginEnv(r.plugin) } : r.env,
        stdin: r.stdin === undefined ? undefined : withRequestId(r.stdin, `${++lastRequestId}`),
        timeoutMs: r.timeoutMs,
        graceMs: r.graceMs,
        signal: r.signal,
        plugin: r.plugin?.name ?? null,
        mode: "consult",
      });
    return this.#options.ask ? this.#options.ask(request, once) : once(request);
  }

  /** Plugins handling `event`, in name order. */
  handlers(event: string): Plugin[] {
    // Own keys only: "toString" or "constructor" is an event name like any other.
    return this.index.plugins.filter((plugin) => Object.hasOwn(plugin.hooks, event));
  }

  /** Runs one script under the runner's settings and process gate; default: event timeout. */
  run(script: string, options: RunOptions = {}): Promise<RunResult> {
    const requested = performance.now();
    const timeoutMs = options.timeoutMs ?? this.timeouts.event;
    const go = () =>
      runScript(script, {
        graceMs: this.#options.graceMs,
        maxOutputBytes: this.#options.maxOutputBytes,
        signal: this.#options.signal,
        ...options,
        // Time spent waiting for a slot counts: a timeout (and so a consulted call's deadline)
        // bounds the call, not just the script.
        timeoutMs: Math.max(1, timeoutMs - (performance.now() - requested)),
      });
    return this.#options.limit ? this.#options.limit(go) : go();
  }

  /** Runs `plugin`'s script for `event` from the plugin dir, the plugin variables added. */
  runHook(plugin: Plugin, event: string, options: RunOptions = {}): Promise<RunResult> {
    const once = () =>
      this.run(plugin.hooks[event], {
        ...options,
        cwd: plugin.dir,
        env: { ...options.env, ...pluginEnv(plugin) },
        plugin: plugin.name,
      });
    const notify = this.#options.notify;
    if (notify === undefined || options.mode !== "notify" || typeof options.stdin !== "string") {
      return once();
    }
    // The daemon's persistent hooks: the request line goes to a process already running.
    return notify({
      event,
      plugin,
      script: plugin.hooks[event],
      stdin: options.stdin,
      env: options.env,
      timeoutMs: options.timeoutMs ?? this.timeouts.event,
      graceMs: this.graceMs,
      signal: options.signal ?? this.#options.signal ?? new AbortController().signal,
    }, once);
  }

  /**
   * Asks the `task.route` handlers, decided in name order, under which profile `task` runs; the
   * first non-empty decision wins (`plugin` is `""` when nobody decided).
   */
  async route(task: Task, options: RouteOptions = {}): Promise<RouteResult> {
    // Loaded when asked, as placement is: a warm `place` or `tool pre` does not pay for it.
    const { route } = await import("../consult/route.ts");
    return await route(this, task, options);
  }

  /** True when some plugin handles `task.route`. Starts no process. */
  handlesRoute(): boolean {
    return this.handlers(TASK_ROUTE).length > 0;
  }

  /**
   * Asks the `task.placement` handlers, decided in name order, on which host the task runs; the
   * first named target wins. Every field is `""` when nobody answered: run locally.
   */
  async resolvePlacement(info: PlacementInfo, options: ConsultOptions = {}): Promise<Placement> {
    // Loaded when asked: a warm `route` does not pay for the placement and hosts readers.
    const { resolvePlacement } = await import("../consult/placement.ts");
    return await resolvePlacement(this, info, options);
  }

  /** True when some plugin handles `task.placement`. Starts no process. */
  hasPlacementHandler(): boolean {
    return this.handlers(TASK_PLACEMENT).length > 0;
  }

  /** Asks every `task.hosts` handler where the task could run; their lists merged in name order. */
  async listHosts(
    info: Partial<PlacementInfo> = {},
    options: ConsultOptions = {},
  ): Promise<HostsList> {
    const { listHosts } = await import("../consult/placement.ts");
    return await listHosts(this, info, options);
  }

  /** True when some plugin handles `task.hosts`. Starts no process. */
  hasHostsHandler(): boolean {
    return this.handlers(TASK_HOSTS).length > 0;
  }

  /**
   * Fires `event` (any name) at the legacy hook and every plugin handling it, all at once, each
   * waited for until what it started has ended too. Never rejects: one record per script.
   */
  async fire(event: string, task?: Task, message = ""): Promise<RunRecord[]> {
    return (await this.fireRuns(event, task, message)).map(toRecord);
  }

  /**
   * {@linkcode Runner.fire}, keeping each run's captured output (`fire --show-output`). No task:
   * the empty one.
   */
  async fireRuns(event: string, given?: Task, message = ""): Promise<RunResult[]> {
    // The task readers load on the paths that pass a task: a consulted call does not pay for them.
    const { EMPTY_TASK, taskEnv } = await import("../wire/task.ts");
    const task = given ?? EMPTY_TASK;
    const env = taskEnv(task, { event, message });
    // The event as JSON on stdin (a tyhooks extension): the whole task, for hooks that POST it.
    const stdin = JSON.stringify({ event, task, message }) + "\n";
    const runs: { timeoutMs: number; result: Promise<RunResult> }[] = [];
    // Fired, any event is bounded as an event is (`fire post_tool_call` included): `--timeout`
    // of fire sets that bound.
    const timeoutFor = (plugin: Plugin | null) => this.timeoutFor(event, plugin, "event");
    const legacy = await this.#legacyHook(event);
    // Notified: a hook's background work (`curl … &`) finishes before the run ends.
    const mode = "notify";
    if (legacy !== null) {
      const timeoutMs = timeoutFor(null);
      runs.push({
        timeoutMs,
        result: this.run(legacy, {
          cwd: this.#options.hooksDir,
          env: taskEnv(task, { event, message, legacy: true }),
          stdin,
          mode,
          timeoutMs,
        }),
      });
    }
    for (const plugin of this.handlers(event)) {
      const timeoutMs = timeoutFor(plugin);
      runs.push({
        timeoutMs,
        result: this.runHook(plugin, event, { env, stdin, mode, timeoutMs }),
      });
    }
    const results = await Promise.all(runs.map((run) => run.result));
    for (const [i, result] of results.entries()) {
      if (succeeded(result)) continue;
      const failed = `Hook for "${event}" failed: ${failureReason(result, runs[i].timeoutMs)}`;
      this.log.log("warn", failed, {
        plugin: result.plugin ?? "(legacy)",
        script: result.script,
        stderr: excerpt(result.stderr),
      });
    }
    return results;
  }

  /** ty's OnStatusChange: fires the event {@linkcode statusEvent} maps `status` to, if any. */
  async onStatusChange(task: Task, status: string, message = ""): Promise<StatusChangeResult> {
    const event = statusEvent(status, message);
    if (event === null) return { event, runs: [] };
    return { event, runs: await this.fire(event, task, message) };
  }

  /**
   * Runs a plugin action (`plugins run`), with the task's variables when a task is given; a
   * `NotFoundError` when the plugin or the action does not exist.
   */
  async runAction(
    pluginName: string,
    actionId: string,
    { task, ...live }: ActionOptions = {},
  ): Promise<RunResult> {
    const plugin = this.index.plugins.find((p) => p.name === pluginName);
    if (plugin === undefined) {
      const known = this.index.plugins.map((p) => p.name);
      throw new NotFoundError({ kind: "plugin", name: pluginName, known });
    }
    const action = plugin.actions.find((a) => a.id === actionId);
    if (action === undefined) {
      const known = plugin.actions.map((a) => a.id);
      throw new NotFoundError({ kind: "action", name: actionId, plugin: pluginName, known });
    }
    const taskVars = task ? (await import("../wire/task.ts")).taskEnv(task) : {};
    const env = { ...taskVars, ...pluginEnv(plugin) };
    return await this.run(action.command, {
      cwd: plugin.dir,
      env,
      plugin: plugin.name,
      timeoutMs: this.timeouts.action,
      mode: "notify",
      sweepSession: true,
      raw: true, // Shown to the user as written: binary-safe.
      ...live,
    });
  }

  async #legacyHook(event: string): Promise<string | null> {
    const dir = this.#options.hooksDir;
    // An event name is a file name here: never let one walk out of the hooks dir.
    if (
      dir === undefined || event === "" || event.includes("/") || event === "." || event === ".."
    ) return null;
    const path = join(dir, event);
    try {
      return (await Deno.stat(path)).isFile ? path : null;
    } catch {
      return null;
    }
  }
}
