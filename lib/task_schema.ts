/**
 * The task as hosts send it (snake_case JSON). Loaded lazily: zod is not on the path of
 * `--help`, `--version` or a cached call.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "./_type_check.ts";
import type { Task } from "./task.ts";

// A JSON null reads as empty, as Go's encoding/json (ty) leaves the zero value for it.
const text = z.string().nullish().transform((value) => value ?? "");

/**
 * Zod schema of a {@linkcode Task}. Unknown fields are ignored (stripped); every known field is optional.
 */
export const TaskSchema = z.object({
  id: z.number().int().nullish().transform((value) => value ?? 0),
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
  port: z.number().int().nullish().transform((value) => value ?? 0),
  tags: text,
  metadata: z.record(z.string(), z.unknown()).nullish().transform((value) => value ?? null),
  created_at: text,
  updated_at: text,
}) satisfies z.ZodType<Task>;

// The schema validates, the interface documents: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof TaskSchema>, Task>;
