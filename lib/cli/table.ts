/**
 * What list commands print: a padded text table, control characters escaped so no cell breaks it
 * or reaches the terminal raw; and, for nothing to list, one info line on stderr, stdout empty.
 *
 * @module
 */

import type { Logger } from "../log.ts";
import { escapeControl, quoted } from "../text.ts";

/** Logs `No <things> in "<where>"` at info level, and the hint after it when there is one. */
export function nothingListed(
  log: Logger,
  things: string,
  options: { where: string; hint?: string },
): void {
  const hint = options.hint === undefined ? "" : ` (hint: ${options.hint})`;
  log.log("info", `No ${things} in ${quoted(options.where)}${hint}`);
}

/** `columns` as the header, then `rows`, one line each, every cell on one line. */
export function table(columns: string[], rows: string[][]): string {
  const all = [columns, ...rows.map((row) => row.map(escapeControl))];
  const widths = columns.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  return all
    .map((row) => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])))
    .map((cells) => cells.join("  ") + "\n")
    .join("");
}
