/**
 * "Did you mean": the closest known word within a small edit distance.
 *
 * @module
 */

/**
 * Finds the candidate closest to `word`, if any is within `max` edits (and is not `word`).
 *
 * @param max Largest edit distance accepted; default 2.
 */
export function closest(word: string, candidates: readonly string[], max = 2): string | undefined {
  let best: string | undefined;
  let bestDistance = max + 1;
  for (const candidate of candidates) {
    if (candidate === word) return undefined;
    if (Math.abs(candidate.length - word.length) > max) continue;
    const distance = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (distance < bestDistance) [best, bestDistance] = [candidate, distance];
  }
  return best;
}

function editDistance(a: string, b: string): number {
  // Words here are short keys: an O(len²) table is fine, and long input is no typo of one.
  if (a.length > 64) return Infinity;
  let previous = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      current[j] = Math.min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost);
    }
    previous = current;
  }
  return previous[b.length];
}
