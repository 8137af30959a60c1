/**
 * Test helpers for the consulted hooks: a hand-built plugin index over real scripts (no loader),
 * a logger that keeps what it is told, and temp dirs for scripts to leave traces in.
 */

import { createLogger, type Logger } from "../../lib/log.ts";
import type { PluginIndex } from "../../lib/plugins/types.ts";
import { indexOf } from "../hooks/_index.ts";
import { tempDir } from "../_cli.ts";

/** Plugin name -> event -> script text (starting with "#!"). */
export type PluginScripts = Record<string, Record<string, string>>;

/** Writes each plugin's hook scripts under a new temp dir and returns the index. */
export function pluginIndex(plugins: PluginScripts): Promise<PluginIndex> {
  return indexOf(
    Object.fromEntries(Object.entries(plugins).map(([name, hooks]) => [name, { hooks }])),
  );
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
  return tempDir({ prefix: "tyhooks-trace-" });
}
