/**
 * Durations on the command line: `500ms`, `15s`, `2m`, or plain seconds (`1.5`).
 *
 * @module
 */

/** The longest duration a timer can wait: 2^31 - 1 ms, about 24.8 days. */
export const MAX_DURATION_MS = 2 ** 31 - 1;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000 };

/**
 * Parses a duration into milliseconds.
 *
 * @param text The value as typed.
 * @returns Milliseconds, or `undefined` when `text` is not a duration.
 */
export function parseDuration(text: string): number | undefined {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m)?\s*$/.exec(text);
  if (match === null) return undefined;
  const ms = Number(match[1]) * UNITS[match[2] ?? "s"];
  // Timers hold 32-bit milliseconds: a longer one (24.8 days) would fire at once.
  return Number.isFinite(ms) && ms <= MAX_DURATION_MS ? Math.round(ms) : undefined;
}
