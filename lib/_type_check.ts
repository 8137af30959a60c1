/**
 * Compile-time proof that a zod schema and the interface documenting it describe the same values.
 * Each schema module states `true satisfies Same<z.output<typeof XSchema>, X>;`: a field added to
 * one of the two and not the other fails `deno check`. (A statement rather than the usual
 * `type _Check = Assert<...>`, which deno.json's `noUnusedLocals` rejects as an unused alias; the
 * statement compiles to `true;`.)
 *
 * @module
 */

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
