/**
 * The text table list commands print (`services list`, `spool list`): a header row, columns
 * padded to their widest cell, two spaces between them.
 *
 * @module
 */

/** `columns` as the header, then `rows`, one line each, every cell on one line. */
export function table(columns: string[], rows: string[][]): string {
  const all = [columns, ...rows.map((row) => row.map(oneLine))];
  const widths = columns.map((_, i) => Math.max(...all.map((row) => row[i].length)));
  return all
    .map((row) => row.map((cell, i) => i === row.length - 1 ? cell : cell.padEnd(widths[i])))
    .map((cells) => cells.join("  ") + "\n")
    .join("");
}

// A multi-line command (a YAML block scalar), an event name with a newline: control characters
// are shown escaped so no cell breaks the table.
function oneLine(text: string): string {
  // deno-lint-ignore no-control-regex
  return text.replace(/[\u0000-\u001f\u007f]/g, (c) => JSON.stringify(c).slice(1, -1));
}
