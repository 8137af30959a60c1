/**
 * Schemas as types. What the library promises of each schema it exports: to parse a value and to
 * check one. At run time every exported schema is the zod schema itself, which tyhooks validates
 * with; `Schema` names only the promised part, so the public API names no zod type and does not
 * change when zod's types do.
 *
 * And the compile-time proof that a zod schema and the interface documenting it describe the same
 * values: each wire format states `true satisfies Same<z.output<typeof XSchema>, X>;`, so a field
 * added to one of the two and not the other fails `deno check`. (A statement rather than the usual
 * `type _Check = Assert<...>`, which deno.json's `noUnusedLocals` rejects as an unused alias; the
 * statement compiles to `true;`.)
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

/**
 * `true` when `A` and `B` are the same type, else `false`. Stricter than assignability both ways:
 * an optional field is not a required one, `readonly` counts, and `any` equals only `any`.
 */
export type Equals<A, B> = (<T>() => T extends A ? 1 : 2) extends (<T>() => T extends B ? 1 : 2)
  ? true
  : false;

/**
 * `true` when a schema's type and its interface are the same type. Otherwise an object naming the
 * fields only one side has, so that `deno check`'s error says what drifted (both `never`: a field
 * they share differs in type or optionality).
 */
export type Same<Schema, Interface> = Equals<Schema, Interface> extends true ? true : {
  only_in_schema: Exclude<keyof Schema, keyof Interface>;
  only_in_interface: Exclude<keyof Interface, keyof Schema>;
};
