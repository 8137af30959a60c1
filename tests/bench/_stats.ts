/** Benchmark helpers: medians and percentiles of repeated timings, and tidy figures. */

/** Times `fn` `n` times (after `warmup` untimed runs); returns milliseconds per call. */
export async function timeEach(
  n: number,
  fn: () => Promise<unknown>,
  warmup = 5,
): Promise<number[]> {
  for (let i = 0; i < warmup; i++) await fn();
  const times: number[] = [];
  for (let i = 0; i < n; i++) {
    const start = performance.now();
    await fn();
    times.push(performance.now() - start);
  }
  return times;
}

/** The q-th quantile (0..1) of `values`. */
export function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

/** The median. */
export function median(values: number[]): number {
  return quantile(values, 0.5);
}

/**
 * The median of `values[i] / bases[i]`, each run over the baseline run of the same round: a
 * machine that slows down for a while slows both runs of a pair alike.
 */
export function pairedRatio(values: number[], bases: number[]): number {
  return median(values.map((value, i) => value / bases[i]));
}

/**
 * Where {@linkcode pairedRatio} lies, 19 times in 20: the 2.5th and 97.5th percentiles of the
 * median of 2,000 resamplings of the rounds (a bootstrap). The seed is fixed: the same times give
 * the same interval.
 */
export function pairedInterval(values: number[], bases: number[]): [number, number] {
  const ratios = values.map((value, i) => value / bases[i]);
  let seed = 1;
  const pick = () => ratios[(seed = (seed * 48271) % 2147483647) % ratios.length];
  const medians = Array.from({ length: 2000 }, () => median(ratios.map(pick)));
  return [quantile(medians, 0.025), quantile(medians, 0.975)];
}

/** `1.23 ms`. */
export function ms(value: number): string {
  return `${value.toFixed(2)} ms`;
}

/** `1.07x`. */
export function ratio(value: number, base: number): string {
  return `${(value / base).toFixed(2)}x`;
}

/** Resident memory of this process in MB. */
export function rssMb(): number {
  return Math.round(Deno.memoryUsage().rss / 1e6);
}

/** `141.73 M (141.70-141.76)`: the median of counts in millions, and their range. */
export function millions(counts: number[]): string {
  const m = (n: number) => (n / 1e6).toFixed(2);
  return `${m(median(counts))} M (${m(Math.min(...counts))}-${m(Math.max(...counts))})`;
}
