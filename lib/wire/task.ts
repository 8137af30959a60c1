/**
 * The task as hosts send it (snake_case JSON). Loaded lazily: zod is not on the path of
 * `--help`, `--version` or a cached call.
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "./schema.ts";

/**
 * A task, as hosts send it in snake_case JSON, every field present (empty string, 0 or null
 * when the host did not send it). `TaskSchema` validates it.
 */
export interface Task {
  /** ty's task id, a non-negative integer (`TASK_ID`). */
  id: number;
  /** The title (`TASK_TITLE`). */
  title: string;
  /** The description: what the agent is asked to do. */
  body: string;
  /** ty's status, e.g. `queued`, `processing`, `done`, `blocked` (`TASK_STATUS`). */
  status: string;
  /** ty's task type (`TASK_TYPE`). */
  type: string;
  /** The project the task belongs to (`TASK_PROJECT`). */
  project: string;
  /** The agent that runs it, e.g. `claude` (`TASK_EXECUTOR`, for `task.route` only). */
  executor: string;
  /** The worktree the agent works in (`WORKTREE_PATH`). */
  worktree_path: string;
  /** The repository the worktree comes from. */
  repo_path: string;
  /** The agent's config dir (`TASK_CLAUDE_CONFIG_DIR`, for `task.route` only). */
  claude_config_dir: string;
  /** The worktree's git branch (`WORKTREE_BRANCH`, legacy hooks only). */
  branch_name: string;
  /** The worktree's port, 0 when none (`WORKTREE_PORT`, legacy hooks only). */
  port: number;
  /** ty's tags, one string (`TASK_TAGS`, legacy hooks only). */
  tags: string;
  /** Free-form metadata (`TASK_METADATA` as JSON, legacy hooks only); null when none. */
  metadata: Record<string, unknown> | null;
  /** When the task was created, as the host wrote it. */
  created_at: string;
  /** When the task was last updated, as the host wrote it. */
  updated_at: string;
}
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
});

// The schema validates, the interface documents: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof TaskSchema>, Task>;
