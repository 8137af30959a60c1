/**
 * `tyhooks doctor`: every check of a setup, in the order a person fixes them: the runtime, the
 * plugins and their scripts, what tyhooks keeps on disk, the daemon, the coding agents. Each
 * check is a value; the command prints them.
 *
 * @module
 */

import type { Check } from "./check.ts";
import { runtimeChecks } from "./runtime.ts";
import { pluginChecks } from "./plugins.ts";
import { stateChecks } from "./state.ts";
import { daemonCheck } from "./daemon.ts";
import { agentChecks } from "./agents.ts";

/** Options of {@linkcode doctor}. */
export interface DoctorOptions {
  /** The plugins dir (absolute). */
  pluginsDir: string;
  /** The legacy hooks dir (absolute). */
  hooksDir: string;
  /** The project whose agent settings are checked; default the working directory. */
  cwd?: string;
}

/**
 * Runs every check. Requires the tyhooks permission set (a missing grant is itself reported,
 * and what it keeps from being checked fails).
 */
export async function doctor(options: DoctorOptions): Promise<Check[]> {
  return [
    ...runtimeChecks(),
    ...await pluginChecks(options.pluginsDir, options.hooksDir),
    ...await stateChecks(),
    await daemonCheck(options.pluginsDir),
    ...await agentChecks(options.cwd ?? Deno.cwd()),
  ];
}
