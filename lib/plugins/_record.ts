/**
 * Small shape tests for data decoded from YAML.
 *
 * @module
 */

/**
 * Is `value` a YAML map (a plain object, not a list)?
 */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A copy of a map without its null values: ty (Go) reads `label:` with nothing after it as an
 * absent field, and so does the forgiving loader.
 */
export function withoutNulls(value: unknown): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}
