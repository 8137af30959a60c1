/**
 * What the library promises of each schema it exports: to parse a value and to check one. At run
 * time every exported schema is the zod schema itself, which tyhooks validates with; this type
 * names only the promised part, so the public API names no zod type and does not change when zod's
 * types do.
 *
 * @module
 */

/** One thing wrong with a value. */
export interface SchemaIssue {
  /** Where, from the top: object keys and array indexes; empty for the value itself. */
  readonly path: readonly PropertyKey[];
  /** What is wrong, in words, e.g. `Invalid input: expected number, received string`. */
  readonly message: string;
}

/**
 * What {@linkcode Schema.safeParse} returns: the value, or everything wrong with it (at least one
 * issue).
 */
export type SafeParse<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly SchemaIssue[] } };

/** A schema of the library: validates a decoded JSON (or YAML) value as a `T`. */
export interface Schema<T> {
  /**
   * Validates `value`: the result has the schema's defaults filled in and, unless the schema is
   * strict, unknown keys dropped.
   *
   * @throws {Error} What is wrong (zod's `ZodError`, whose `issues` are {@linkcode SchemaIssue}s).
   */
  parse(value: unknown): T;
  /** Validates `value` without throwing: the result says whether it passed. */
  safeParse(value: unknown): SafeParse<T>;
}
