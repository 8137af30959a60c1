/**
 * The tyhooks version; a test keeps it equal to `deno.json`'s.
 *
 * @example
 * ```ts
 * import { VERSION } from "./version.ts";
 * console.assert(/^\d+\.\d+\.\d+/.test(VERSION));
 * ```
 */
export const VERSION = "0.1.0";
