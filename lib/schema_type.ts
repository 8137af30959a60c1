/**
 * What the library promises of each schema it exports: to parse a value and to check one. At run
 * time every exported schema is the zod schema itself, which tyhooks validates with; this type
 * names only the promised part, so the public API names no zod type and does not change when zod's
 * types do.
 *
 * @module
 */

/**
 * One thing wrong with a value.
 *
 * @example
 * ```ts
 * import type { SchemaIssue } from "./schema_type.ts";
 * import { TaskSchema } from "./schemas.ts";
 * const result = TaskSchema.safeParse({ id: "seven" });
 * const issues: readonly SchemaIssue[] = result.success ? [] : result.error.issues;
 * console.assert(issues[0].path[0] === "id" && issues[0].message !== "");
 * ```
 */
export interface SchemaIssue {
  /** Where, from the top: object keys and array indexes; empty for the value itself. */
  readonly path: readonly PropertyKey[];
  /** What is wrong, in words, e.g. `Invalid input: expected number, received string`. */
  readonly message: string;
}

/**
 * What {@linkcode Schema.safeParse} returns: the value, or everything wrong with it (at least one
 * issue).
 *
 * @example
 * ```ts
 * import type { SafeParse } from "./schema_type.ts";
 * import { TaskSchema } from "./schemas.ts";
 * import type { Task } from "./task.ts";
 * const result: SafeParse<Task> = TaskSchema.safeParse({ id: 7 });
 * console.assert(result.success && result.data.title === "");
 * ```
 */
export type SafeParse<T> =
  | { success: true; data: T }
  | { success: false; error: { issues: readonly SchemaIssue[] } };

/**
 * A schema of the library: validates a decoded JSON (or YAML) value as a `T`.
 *
 * @example Tell a user what is wrong with their task
 * ```ts
 * import type { Schema } from "./schema_type.ts";
 * import { TaskSchema } from "./schemas.ts";
 * import type { Task } from "./task.ts";
 * function problems<T>(schema: Schema<T>, value: unknown): string[] {
 *   const result = schema.safeParse(value);
 *   if (result.success) return [];
 *   return result.error.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`);
 * }
 * const taskSchema: Schema<Task> = TaskSchema;
 * console.assert(problems(taskSchema, { id: 1.5 })[0].startsWith("id: "));
 * console.assert(problems(taskSchema, { id: 1 }).length === 0);
 * ```
 */
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
