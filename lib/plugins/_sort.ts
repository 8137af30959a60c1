/**
 * Orders that are the same on every machine: no locale, no file-system order.
 *
 * @module
 */

/**
 * Compares strings by UTF-16 code unit.
 */
export function byCodeUnit(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Compares relative paths folder by folder, so `a/z` comes before `a-b` and a collection's
 * plugins stay together.
 */
export function byPath(a: string, b: string): number {
  const left = a.split("/");
  const right = b.split("/");
  for (let i = 0; i < Math.min(left.length, right.length); i++) {
    const order = byCodeUnit(left[i], right[i]);
    if (order !== 0) return order;
  }
  return left.length - right.length;
}
