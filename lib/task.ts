/**
 * Task input (`--task FILE`, `--task-json STRING`, HTTP bodies) and the environment hooks get.
 *
 * @module
 */

import { InputError } from "./errors.ts";
import { isRecord, issueText, parseJson } from "./wire/json.ts";
import type { Task } from "./wire/task.ts";

export type { Task };

/** The empty task: what commands use when no task is given. */
export const EMPTY_TASK: Task = Object.freeze({
  id: 0,
  title: "",
  body: "",
  status: "",
  type: "",
  project: "",
  executor: "",
  worktree_path: "",
  repo_path: "",
  claude_config_dir: "",
  branch_name: "",
  port: 0,
  tags: "",
  metadata: null,
  created_at: "",
  updated_at: "",
});

/**
 * Validates a decoded JSON value as a task; `source` names the input in errors.
 *
 * @throws {InputError} Naming the bad field, e.g. `Invalid task in --task-json: "id" must be ...`.
 * @example
 * ```ts
 * import { validateTask } from "./task.ts";
 * const task = await validateTask({ id: 3, title: "x" }, "example");
 * console.assert(task.title === "x" && task.body === "" && task.metadata === null);
 * await validateTask({ id: "3" }, "example").then(() => console.assert(false), () => {});
 * ```
 */
export async function validateTask(value: unknown, source: string): Promise<Task> {
  const fast = wellFormedTask(value);
  if (fast !== null) return fast;
  if (!isRecord(value)) {
    throw new InputError(`Invalid task in ${source}: expected a JSON object`, { input: source });
  }
  // Something is off: zod, the source of truth, says precisely what.
  const { TaskSchema } = await import("./wire/task.ts");
  const result = TaskSchema.safeParse(value);
  if (result.success) return result.data;
  throw new InputError(
    `Invalid task in ${source}: ${issueText(result.error.issues[0], '"(task)"')}`,
    { input: source },
  );
}

/** The text fields of a task; a test keeps this list equal to TaskSchema's. */
export const TASK_TEXT_FIELDS = [
  "title",
  "body",
  "status",
  "type",
  "project",
  "executor",
  "worktree_path",
  "repo_path",
  "claude_config_dir",
  "branch_name",
  "tags",
  "created_at",
  "updated_at",
] as const;

/**
 * The spawn-time fast path: a task whose every known field has the right type is built without
 * loading zod (about 13 ms of startup here); anything else returns null and goes to zod.
 */
function wellFormedTask(value: unknown): Task | null {
  if (!isRecord(value)) return null;
  const input = value;
  const id = input.id ?? 0;
  if (typeof id !== "number" || !Number.isSafeInteger(id)) return null;
  const port = input.port ?? 0;
  if (typeof port !== "number" || !Number.isSafeInteger(port)) return null;
  const metadata = input.metadata ?? null;
  if (metadata !== null && (typeof metadata !== "object" || Array.isArray(metadata))) return null;
  // Completed by the loop: TASK_TEXT_FIELDS names every other field (a test keeps it so).
  const task = { id, port, metadata } as Task;
  for (const field of TASK_TEXT_FIELDS) {
    const text = input[field];
    if (text === undefined || text === null) task[field] = "";
    else if (typeof text === "string") task[field] = text;
    else return null;
  }
  return task;
}

/**
 * Parses task JSON text; `source` names the input in errors.
 *
 * @throws {InputError} On malformed JSON or a bad field.
 * @example
 * ```ts
 * import { parseTask } from "./task.ts";
 * const task = await parseTask('{"id": 1, "title": "Ship"}', "--task-json");
 * console.assert(task.id === 1);
 * ```
 */
export async function parseTask(text: string, source: string): Promise<Task> {
  const json = parseJson(text);
  if (!json.ok) {
    throw new InputError(`Invalid task in ${source}: ${json.error}`, { input: source });
  }
  return await validateTask(json.value, source);
}

/** Options of {@linkcode taskEnv}. */
export interface TaskEnvOptions {
  /** Adds `TASK_EVENT` and `TASK_MESSAGE` (event hooks). */
  event?: string;
  /** The message for `TASK_MESSAGE`; default empty. */
  message?: string;
  /** Adds `TASK_EXECUTOR` and `TASK_CLAUDE_CONFIG_DIR` (`task.route`). */
  route?: boolean;
  /**
   * Adds what ty's second emitter (`internal/events`) gives the legacy hooks dir:
   * `TASK_TIMESTAMP` (RFC 3339, now), `TASK_EXECUTOR`, and `WORKTREE_BRANCH`, `WORKTREE_PORT`,
   * `TASK_TAGS`, `TASK_METADATA` (JSON) each only when known.
   */
  legacy?: boolean;
  /** The time for `TASK_TIMESTAMP`; default now. */
  now?: Date;
}

/**
 * The task variables of ty's hook environment, to add to the inherited one (NUL bytes are
 * cleaned when a script is spawned).
 */
export function taskEnv(task: Task, options: TaskEnvOptions = {}): Record<string, string> {
  const env: Record<string, string> = {
    TASK_ID: String(task.id),
    TASK_TITLE: task.title,
    TASK_STATUS: task.status,
    TASK_PROJECT: task.project,
    TASK_TYPE: task.type,
    WORKTREE_PATH: task.worktree_path,
  };
  if (options.event !== undefined) {
    env.TASK_EVENT = options.event;
    env.TASK_MESSAGE = options.message ?? "";
  }
  if (options.route) {
    env.TASK_EXECUTOR = task.executor;
    env.TASK_CLAUDE_CONFIG_DIR = task.claude_config_dir;
  }
  if (options.legacy) {
    env.TASK_TIMESTAMP = rfc3339(options.now ?? new Date());
    env.TASK_EXECUTOR = task.executor;
    if (task.branch_name !== "") env.WORKTREE_BRANCH = task.branch_name;
    if (task.port !== 0) env.WORKTREE_PORT = String(task.port);
    if (task.tags !== "") env.TASK_TAGS = task.tags;
    if (task.metadata !== null && Object.keys(task.metadata).length > 0) {
      env.TASK_METADATA = goJson(task.metadata);
    }
  }
  return env;
}

/**
 * `time.RFC3339` as Go formats it: local time to the second, `Z` for UTC, else `+hh:mm`, so a
 * legacy hook parses tyhooks' timestamp exactly as ty's.
 */
function rfc3339(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, "0");
  const offset = -date.getTimezoneOffset();
  const zone = offset === 0
    ? "Z"
    : `${offset < 0 ? "-" : "+"}${pad(Math.floor(Math.abs(offset) / 60))}:${
      pad(Math.abs(offset) % 60)
    }`;
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}${zone}`;
}

/**
 * JSON as Go's `json.Marshal` writes a `map[string]interface{}`, which ty's hooks receive: keys
 * sorted at every level, and `<`, `>`, `&`, U+2028, U+2029 escaped as `\u003c` and so on.
 */
function goJson(value: unknown): string {
  return JSON.stringify(sortKeys(value)).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value === null || typeof value !== "object") return value;
  const record = value as Record<string, unknown>;
  return Object.fromEntries(Object.keys(record).sort().map((key) => [key, sortKeys(record[key])]));
}
