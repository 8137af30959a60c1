/**
 * Decoding a script's JSON answer into a value or a reason, the one way every answer reader
 * reports malformed JSON.
 *
 * @module
 */

/**
 * Parses `text` as JSON.
 *
 * @param text A script's stdout.
 * @returns The value, or `malformed JSON: <why>`.
 * @example
 * ```ts
 * import { parseJson } from "./_json.ts";
 * const bad = parseJson("{oops");
 * console.assert(!bad.ok && bad.error.startsWith("malformed JSON: "));
 * ```
 */
export function parseJson(
  text: string,
): { ok: true; value: unknown } | { ok: false; error: string } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (error) {
    return { ok: false, error: `malformed JSON: ${(error as Error).message}` };
  }
}
