/**
 * Load warnings as log lines: the message, with the plugin, file, line and column as fields (so
 * JSON logs stay machine-readable).
 *
 * @module
 */

import type { Logger } from "../log.ts";
import type { LoadWarning } from "./types.ts";

/**
 * Logs each warning at `warn` level.
 *
 * @param warnings The warnings, e.g. `index.warnings`.
 */
export function logWarnings(log: Logger, warnings: readonly LoadWarning[]): void {
  for (const w of warnings) {
    log.log("warn", w.message, {
      plugin: w.plugin ?? undefined,
      path: w.path,
      line: w.line ?? undefined,
      column: w.column ?? undefined,
    });
  }
}
