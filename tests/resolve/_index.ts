/**
 * Test helpers for the consulted hooks: a hand-built plugin index over real scripts in a temp
 * dir (no dependency on the loader), and a logger that keeps what it is told.
 */

import { join } from "node:path";
import { writeTree } from "../_cli.ts";
import type { Plugin, PluginIndex } from "../../lib/plugins/types.ts";
import { createLogger, type Logger } from "../../lib/log.ts";

/** Plugin name -> event -> script text (starting with "#!"). */
export type PluginScripts = Record<string, Record<string, string>>;

/** Writes each plugin's scripts under a new temp dir and returns the index, sorted by name. */
export async function pluginIndex(plugins: PluginScripts): Promise<PluginIndex> {
  const dir = await Deno.makeTempDir({ prefix: "tyhooks-plugins-" });
  const list: Plugin[] = [];
  for (const name of Object.keys(plugins).sort()) {
    const files: Record<string, string> = {};
    const hooks: Record<string, string> = {};
    for (const [event, script] of Object.entries(plugins[name])) {
      files[`${name}/${event}.sh`] = script;
      hooks[event] = join(dir, name, `${event}.sh`);
    }
    await writeTree(dir, files);
    list.push({
      name,
      version: "",
      description: "",
      dir: join(dir, name),
      hooks,
      actions: [],
      services: [],
      workflows: [],
      routines: [],
    });
  }
  return { dir, plugins: list, warnings: [] };
}

/** One log line, as the JSON logger writes it. */
export interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

/** A logger at debug level that keeps every line. */
export function recordingLogger(): { log: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const log = createLogger({
    format: "json",
    level: "debug",
    write: (line) => lines.push(JSON.parse(line)),
  });
  return { log, lines };
}

/** A fresh temp dir for scripts to leave traces in. */
export function traceDir(): Promise<string> {
  return Deno.makeTempDir({ prefix: "tyhooks-trace-" });
}
