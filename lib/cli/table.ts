/**
 * The text table list commands print (`services list`, `spool list`): a header row, columns
 * padded to their widest cell, two spaces between them; control characters escaped as in the log,
 * so no cell breaks the table or reaches the terminal raw.
 *
 * @module
 */

import { escapeControl } from "../text.ts";

/** `columns` as the header, then `rows`, one line each, every cell on one line. */
export function table(columns: string[], rows: string[][]): string {
  const all = [columns, ...rows.map((row) => row.map(escapeControl))];
  const widths = columns.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  return all
    .map((row) => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])))
    .map((cells) => cells.join("  ") + "\n")
    .join("");
}
