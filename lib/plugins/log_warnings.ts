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
 * @param log Where to log.
 * @param warnings The warnings, e.g. `index.warnings`.
 * @example
 * ```ts
 * import { createLogger } from "../log.ts";
 * import { logWarnings } from "./log_warnings.ts";
 * const lines: string[] = [];
 * logWarnings(createLogger({ write: (l) => lines.push(l) }), [
 *   { plugin: "x", path: "/p/x/plugin.yaml", line: 3, column: 7, message: "Dropped hook" },
 * ]);
 * console.assert(lines[0].includes("line=3"));
 * ```
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
