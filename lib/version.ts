/**
 * The tyhooks version, which `--version`, the daemon's health answer and `probe` report.
 *
 * @module
 */

/** The tyhooks version; a test keeps it equal to `deno.json`'s. */
export const VERSION = "0.1.0";
