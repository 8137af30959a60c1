/**
 * The task, as hosts send it: alone (`--task FILE`, `--task-json STRING`), in the daemon's
 * request bodies, and as hooks get it (environment variables).
 *
 * @module
 */

import { InputError } from "../errors.ts";
import {
  boolean,
  type Infer,
  issueText,
  nullable,
  number,
  object,
  optional,
  orDefault,
  parseJson,
  record,
  type Same,
  type Schema,
  string,
} from "./json.ts";

/**
 * A task, as hosts send it in snake_case JSON, every field present (empty string, 0 or null
 * when the host did not send it). {@linkcode TaskSchema} reads it.
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

// Missing or null reads as empty, as Go's encoding/json (ty) leaves the zero value for a null.
const text = orDefault(string(), "", { orNull: true });
const integer = orDefault(number({ integer: true }), 0, { orNull: true });

const task = object({
  id: integer,
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
  port: integer,
  tags: text,
  metadata: orDefault(nullable(record()), null, { orNull: true }),
  created_at: text,
  updated_at: text,
});
true satisfies Same<Infer<typeof task>, Task>;

/** A {@linkcode Task}: unknown fields dropped, missing or null ones empty. */
export const TaskSchema: Schema<Task> = task;

/** The empty task: what commands use when no task is given. */
export const EMPTY_TASK: Task = Object.freeze(task.parse({}));

/**
 * Parses task JSON text; an `InputError` names `source` and the bad field
 * (`Invalid task in --task-json: "id": expected an integer, got "3"`).
 *
 * @example
 * ```ts
 * import { parseTask } from "./task.ts";
 * const task = parseTask('{"id": 1, "title": "Ship", "body": null}', "--task-json");
 * console.assert(task.id === 1 && task.body === "" && task.metadata === null);
 * ```
 */
export function parseTask(text: string, source: string): Task {
  const invalid = (why: string) =>
    new InputError(`Invalid task in ${source}: ${why}`, { input: source });
  const json = parseJson(text);
  if (!json.ok) throw invalid(json.error);
  const result = task.safeParse(json.value);
  if (!result.success) throw invalid(issueText(result.error.issues[0]));
  return result.data;
}

// The daemon's request bodies. Unknown fields are ignored; a missing `task` is the empty task,
// as on the command line.

/** The body of `POST /v1/route`, `POST /v1/hosts` and `POST /v1/actions/{plugin}/{action}`. */
export interface TaskBody {
  /** The task; when missing, the empty task, as on the command line. */
  task?: Task;
}
export const TaskBodySchema = object({ task: optional(task) });
true satisfies Same<Infer<typeof TaskBodySchema>, TaskBody>;

/** The body of `POST /v1/placement`, as read (defaults filled). */
export interface PlacementBody {
  /** The task to place; when missing, the empty task. */
  task?: Task;
  /** Handlers are told the task must not run locally; default false. (No target is still 200.) */
  remote_required: boolean;
}
export const PlacementBodySchema = object({
  task: optional(task),
  remote_required: orDefault(boolean(), false),
});
true satisfies Same<Infer<typeof PlacementBodySchema>, PlacementBody>;

/** The body of `POST /v1/events/{event}`, as read (defaults filled). */
export interface EventBody {
  /** The task the event is about; when missing, the empty task. */
  task?: Task;
  /** Given to hooks as `TASK_MESSAGE`; default `""`. */
  message: string;
}
const message = orDefault(string(), "");
export const EventBodySchema = object({ task: optional(task), message });
true satisfies Same<Infer<typeof EventBodySchema>, EventBody>;

/** The body of `POST /v1/status-change`, as read (defaults filled). */
export interface StatusChangeBody {
  /** The task whose status changed; when missing, the empty task. */
  task?: Task;
  /** The new status, not empty: it picks the event, as `tyhooks status-change` does. */
  status: string;
  /** Given to hooks as `TASK_MESSAGE`, and read for "fail" or "error" on `blocked`. */
  message: string;
}
export const StatusChangeBodySchema = object({
  task: optional(task),
  status: string({ nonEmpty: true }),
  message,
});
true satisfies Same<Infer<typeof StatusChangeBodySchema>, StatusChangeBody>;

// The task as hooks get it: environment variables.

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
export function rfc3339(date: Date): string {
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
