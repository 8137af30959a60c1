/**
 * The task as hosts send it (snake_case JSON). Loaded lazily: zod is not on the path of
 * `--help`, `--version` or a cached call.
 *
 * @module
 */

import { z } from "zod";

const text = z.string().default("");

/**
 * Zod schema of a task. Unknown fields are ignored (stripped); every known field is optional.
 *
 * @example
 * ```ts
 * import { TaskSchema } from "./task_schema.ts";
 * const task = TaskSchema.parse({ id: 7, title: "Fix it", extra: true });
 * console.assert(task.id === 7 && task.status === "");
 * ```
 */
export const TaskSchema: z.ZodObject<{
  id: z.ZodDefault<z.ZodNumber>;
  title: z.ZodDefault<z.ZodString>;
  body: z.ZodDefault<z.ZodString>;
  status: z.ZodDefault<z.ZodString>;
  type: z.ZodDefault<z.ZodString>;
  project: z.ZodDefault<z.ZodString>;
  executor: z.ZodDefault<z.ZodString>;
  worktree_path: z.ZodDefault<z.ZodString>;
  repo_path: z.ZodDefault<z.ZodString>;
  claude_config_dir: z.ZodDefault<z.ZodString>;
  branch_name: z.ZodDefault<z.ZodString>;
}> = z.object({
  id: z.number().int().nonnegative().default(0),
  title: text,
  body: text,
  status: text,
  type: text,
  project: text,
  executor: text,
  worktree_path: text,
  repo_path: text,
  claude_config_dir: text,
  branch_name: text,
});
