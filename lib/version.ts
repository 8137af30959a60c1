/**
 * The tyhooks version and the Deno release it is built and tested with.
 *
 * @module
 */

/** The tyhooks version; a test keeps it equal to `deno.json`'s. */
export const VERSION = "0.1.0";

/** The Deno release tyhooks is pinned to: CI, the bundles and the npm package's `deno` use it. */
export const DENO_VERSION = "2.9.6";
