/**
 * A logger that cannot throw: a broken logger must not end supervision half-way, with a service
 * left running unwatched.
 *
 * @module
 */

import { type Logger, silentLogger } from "../log.ts";

/**
 * Wraps `log` so that its failures are dropped.
 *
 * @param log The logger; default silent.
 * @returns A logger that never throws.
 * @example
 * ```ts
 * import { safeLogger } from "./_safe_logger.ts";
 * safeLogger({ log() { throw new Error("broken"); } }).log("info", "Dropped, not thrown");
 * ```
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
