/**
 * One service's lifecycle: start it (`sh -c command` in its own process group, with the
 * environment {@linkcode serviceEnv} builds), relay its output, and when it ends, clean up what it
 * left in its group and restart it, leave it stopped, or give up on it, as its restart policy
 * says. Every wait is cancelled by `stop()`.
 *
 * @module
 */

import { ENV_KEY, type PluginService } from "../plugins/types.ts";
import { type Logger, silentLogger } from "../log.ts";
import {
  DEFAULT_GRACE_MS,
  groupAlive,
  spawnIsolated,
  terminateGroup,
  terminateStrays,
  waitGroupEmpty,
  withoutNul,
} from "../process/group.ts";
import {
  type BackoffOptions,
  DEFAULT_BACKOFF,
  nextStep,
  NO_STREAK,
  type Streak,
} from "./backoff.ts";
import { type LineSink, type LineSource, prefixedStderr, relayLines } from "./line_relay.ts";
import type { LastExit, ServiceState, ServiceStatus } from "../wire/services.ts";
import { clearableTimeout, sleep, within } from "../async.ts";
import { DRAIN_MS } from "../process/run_script.ts";

/** Default time between SIGTERM and SIGKILL when stopping. */
export const DEFAULT_STOP_TIMEOUT_MS = 5000;
// How long SIGKILLed processes get to actually die before a stop reports the group empty.
const KILL_SETTLE_MS = 200;
/** Variables ty's daemon gives its services; tyhooks passes its own values through. */
const PASSED_THROUGH = ["TY_DB_PATH", "TY_API_URL"] as const;

/** Splits `KEY=VALUE` at the first `=`; null when there is no `=` or the key is not a name. */
export function parseEnvEntry(entry: string): [string, string] | null {
  const at = entry.indexOf("=");
  if (at <= 0) return null;
  const key = entry.slice(0, at);
  return ENV_KEY.test(key) ? [key, entry.slice(at + 1)] : null;
}

/**
 * The variables set for `service` over the inherited ones: `TY_DB_PATH` and `TY_API_URL` passed
 * through, then `injected`, then its own `env`, later winning; NUL bytes removed, not fatal.
 */
export function serviceEnv(
  service: PluginService,
  injected: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = {};
  for (const name of PASSED_THROUGH) {
    const value = Deno.env.get(name);
    if (value !== undefined) env[name] = value;
  }
  Object.assign(env, injected);
  for (const entry of service.env) {
    const pair = parseEnvEntry(entry);
    if (pair !== null) env[pair[0]] = pair[1];
  }
  return withoutNul(env);
}

/**
 * `log` with its failures dropped: a broken logger must not end supervision half-way, with a
 * service left running unwatched.
 */
export function safeLogger(log: Logger = silentLogger): Logger {
  return {
    log(level, message, fields) {
      try {
        log.log(level, message, fields);
      } catch {
        // Dropped.
      }
    },
  };
}

/** Options of a {@linkcode Supervisor} (and of `startServices`). */
export interface SupervisorOptions {
  /** Injected variables (`--env`), above the passed-through `TY_*`, below the service's own. */
  env?: Record<string, string>;
  /** Where starts, exits, restarts and give-ups are logged; default silent. */
  log?: Logger;
  /** Receives each output line; default `[plugin/service] line` on stderr. */
  output?: LineSink;
  /** Restart timings; default 1 s doubling to 30 s, reset after 10 s up, give up after 5. */
  backoff?: Partial<BackoffOptions>;
  /** TERM-to-KILL grace for what an exited service left in its group; default 500 ms. */
  graceMs?: number;
  /** A started service counts as `running` once up this long; default 1 s. */
  runningAfterMs?: number;
  /** Longer output lines are relayed in pieces; default 64 KiB. */
  maxLineBytes?: number;
}

/**
 * Supervises one service from construction until {@linkcode Supervisor.stop}. Requires
 * `--allow-run`, `--allow-env`, `--allow-read` (/proc tells live group members from zombies).
 */
export class Supervisor {
  /** The plugin the service belongs to. */
  readonly plugin: string;
  /** The service. */
  readonly service: PluginService;
  /** Resolves when supervision has ended (stopped, given up, or not restarted by policy). */
  readonly done: Promise<void>;
  #options: SupervisorOptions;
  #backoff: BackoffOptions;
  #log: Logger;
  #label: string;
  #state: ServiceState = "starting";
  #restarts = 0;
  #lastExit: LastExit | null = null;
  #child: Deno.ChildProcess | undefined;
  #pid: number | null = null;
  #stop = new AbortController();
  #kill: Promise<unknown> = Promise.resolve();
  #stopped: Promise<void> | undefined;

  /** Starts the service (its `cwd` absolute, as the loader resolves it) at once. */
  constructor(plugin: string, service: PluginService, options: SupervisorOptions = {}) {
    this.plugin = plugin;
    this.service = service;
    this.#options = options;
    this.#backoff = { ...DEFAULT_BACKOFF, ...options.backoff };
    this.#log = safeLogger(options.log);
    this.#label = `"${plugin}/${service.name}"`;
    this.done = this.#supervise().catch(async (error) => {
      // A bug, not a service failure: say so, and leave nothing of the service running.
      this.#state = "given_up";
      this.#log.log("error", `Supervisor of service ${this.#label} failed: ${error}`);
      const child = this.#child;
      if (child !== undefined) await terminateGroup(child.pid, { reaped: child.status });
    });
  }

  /** The service's current status. */
  status(): ServiceStatus {
    return {
      plugin: this.plugin,
      name: this.service.name,
      state: this.#state,
      pid: this.#pid,
      restarts: this.#restarts,
      last_exit: this.#lastExit === null ? null : { ...this.#lastExit },
    };
  }

  /**
   * Stops supervising: SIGTERM, SIGKILL after `stopTimeoutMs` (default 5 s); resolves once no
   * process of the group is left. Calling it again returns the same promise.
   */
  stop(options: { stopTimeoutMs?: number } = {}): Promise<void> {
    this.#stopped ??= (async () => {
      this.#stop.abort();
      const child = this.#child;
      if (child !== undefined) {
        const graceMs = options.stopTimeoutMs ?? DEFAULT_STOP_TIMEOUT_MS;
        this.#kill = terminateGroup(child.pid, { graceMs, reaped: child.status }).then((killed) => {
          if (killed) {
            this.#log.log(
              "warn",
              `Service ${this.#label} was still running ${graceMs} ms after SIGTERM: sent SIGKILL`,
            );
          }
          return waitGroupEmpty(child.pid, KILL_SETTLE_MS);
        });
      }
      await this.#kill;
      await this.done;
    })();
    return this.#stopped;
  }

  async #supervise(): Promise<void> {
    let streak: Streak = NO_STREAK;
    while (!this.#stop.signal.aborted) {
      this.#state = "starting";
      const exit = await this.#runOnce();
      this.#lastExit = exit;
      if (this.#stop.signal.aborted) break;
      const failed = exit.error !== null || exit.signal !== null || exit.code !== 0;
      const end = { failed, uptimeMs: exit.uptime_ms };
      const step = nextStep(this.service.restart, end, streak, this.#backoff);
      streak = step.streak;
      if (step.kind === "give_up") {
        this.#state = "given_up";
        this.#log.log(
          "error",
          `Giving up on service ${this.#label}: it failed ${step.streak.quickFailures} times in a ` +
            `row, each within ${this.#backoff.resetAfterMs} ms of starting (hint: run its command ` +
            `by hand from "${this.service.cwd}" to see why)`,
          { plugin: this.plugin, service: this.service.name },
        );
        return;
      }
      if (step.kind === "stop") {
        this.#state = "stopped";
        this.#log.log("info", `Not restarting service ${this.#label}: ${step.reason}`);
        return;
      }
      this.#state = "backoff";
      this.#log.log("info", `Restarting service ${this.#label} in ${step.delayMs} ms`, {
        restarts: this.#restarts + 1,
      });
      if (!await sleep(step.delayMs, this.#stop.signal)) break;
      this.#restarts++;
    }
    this.#state = "stopped";
  }

  async #runOnce(): Promise<LastExit> {
    const started = performance.now();
    let child: Deno.ChildProcess;
    try {
      child = spawnIsolated("sh", {
        args: ["-c", this.service.command],
        cwd: this.service.cwd,
        env: serviceEnv(this.service, this.#options.env),
      });
    } catch (error) {
      const message = `Cannot start service ${this.#label}: ${(error as Error).message}`;
      this.#log.log("error", message, { cwd: this.service.cwd });
      return { code: null, signal: null, error: message, uptime_ms: 0 };
    }
    this.#child = child;
    this.#pid = child.pid;
    this.#log.log("info", `Started service ${this.#label}`, { pid: child.pid });
    const relays = [child.stdout, child.stderr].map((stream) =>
      relayLines(stream, (line) => this.#emit(line), { maxLineBytes: this.#options.maxLineBytes })
    );
    const drained = Promise.all(relays.map((relay) => relay.done));
    const up = clearableTimeout(this.#options.runningAfterMs ?? 1000);
    up.signal.addEventListener("abort", () => {
      if (this.#state === "starting") this.#state = "running";
    });

    const status = await child.status;
    up.clear();
    this.#pid = null;
    const uptime = Math.round(performance.now() - started);
    if (this.#stop.signal.aborted) await this.#kill;
    await within(drained, DRAIN_MS);
    if (!this.#stop.signal.aborted && groupAlive(child.pid)) {
      // What it left in its group must not outlive it, nor run next to its restart (systemd's
      // KillMode=control-group). A descendant that escaped with setsid is on its own.
      await terminateGroup(child.pid, { graceMs: this.#options.graceMs ?? DEFAULT_GRACE_MS });
      await waitGroupEmpty(child.pid, KILL_SETTLE_MS);
      await within(drained, DRAIN_MS);
    }
    // What it left in groups of its own in its session must not outlive it either (only a setsid
    // escapes), pipes held or let go: a scan of every process, paid once a run.
    if (!groupAlive(child.pid)) {
      await terminateStrays(child.pid, this.#options.graceMs ?? DEFAULT_GRACE_MS);
      await within(drained, DRAIN_MS);
    }
    for (const relay of relays) relay.abandon(); // Flushes a partial last line.
    await drained;
    this.#child = undefined;

    const code = status.signal === null ? status.code : null;
    const exit = { code, signal: status.signal, error: null, uptime_ms: uptime };
    const ended = exit.signal !== null ? `was killed by ${exit.signal}` : `exited ${exit.code}`;
    const level = this.#stop.signal.aborted || exit.code === 0 ? "info" : "warn";
    this.#log.log(level, `Service ${this.#label} ${ended}`, { uptime_ms: uptime });
    return exit;
  }

  #emit(line: string): void {
    const source: LineSource = { plugin: this.plugin, service: this.service.name };
    try {
      (this.#options.output ?? prefixedStderr)(line, source);
    } catch {
      // A failing sink must not stop the relay: the service would block on a full pipe.
    }
  }
}
