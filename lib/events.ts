/**
 * The events, and the task each one carries. One table holds every event tyhooks fires or
 * consults, and everything else reads it (the loader, the lint and the schema, the runner, the
 * consulted calls, the daemon's persistent hooks, the CLI's suggestions, `plugins new`): a new
 * event is a new row. Any other name is an event too (`fire` sends any string): a notified one,
 * under the event timeout. Also here: the timeouts SPEC sets, the task statuses that fire an
 * event (ty's OnStatusChange), the task input (`--task FILE`, `--task-json STRING`, HTTP bodies)
 * and the environment a hook gets.
 *
 * @module
 */

import { InputError } from "./errors.ts";
import { isRecord, issueText, parseJson } from "./wire/json.ts";
import type { Task } from "./wire/task.ts";

/** Per-call timeouts, in milliseconds, as SPEC sets them. */
export interface Timeouts {
  /** Event hooks (`fire`, `status-change`): 30 s. */
  event: number;
  /** Actions (`plugins run`): 60 s. */
  action: number;
  /** `task.route` handlers: 15 s. */
  route: number;
  /** `task.placement` handlers: 5 s. */
  placement: number;
  /** `task.hosts` handlers: 5 s. */
  hosts: number;
  /** `pre_tool_call` / `post_tool_call` hooks: 30 s. */
  tool: number;
}

/** The timeouts SPEC sets. */
export const DEFAULT_TIMEOUTS: Readonly<Timeouts> = Object.freeze({
  event: 30_000,
  action: 60_000,
  route: 15_000,
  placement: 5_000,
  hosts: 5_000,
  tool: 30_000,
});

interface Row {
  /** The name `hooks:` keys it by. */
  readonly name: string;
  /** Which of the {@linkcode Timeouts} bounds its hooks (a hook's own `timeout` comes first). */
  readonly timeout: Exclude<keyof Timeouts, "action">;
  /** Its hooks judge tool calls, so they take the `tools` setting. */
  readonly tools?: boolean;
}

/**
 * One event. Consulted: a caller waits for its hooks' answer, and ends whatever a hook left
 * running once it has answered. Notified: its hooks are told, and run until what they started
 * has ended too.
 */
export type EventSpec =
  | Row & {
    readonly kind: "consulted";
    /**
     * What a hook prints: one JSON document, which the consulted call reads (and a persistent
     * hook answers on one line), or `KEY=VALUE` lines, which cannot be a persistent answer.
     */
    readonly answer: "json" | "lines";
  }
  | Row & {
    readonly kind: "notified";
    /** A task event ty fires: `fire` and the legacy hooks dir know it. */
    readonly task?: boolean;
  };

const TASK_STARTED = "task.started";
const TASK_BLOCKED = "task.blocked";
const TASK_FAILED = "task.failed";
// The names code elsewhere refers to; the rest are in the table only.
export const TASK_DONE = "task.done";
export const TASK_ROUTE = "task.route";
export const TASK_PLACEMENT = "task.placement";
export const TASK_HOSTS = "task.hosts";
export const PRE_TOOL_CALL = "pre_tool_call";
export const POST_TOOL_CALL = "post_tool_call";

/** Every event ty and tyhooks send, in the order the docs list them. */
export const EVENTS: readonly EventSpec[] = [
  { name: TASK_STARTED, kind: "notified", timeout: "event", task: true },
  { name: TASK_DONE, kind: "notified", timeout: "event", task: true },
  { name: TASK_BLOCKED, kind: "notified", timeout: "event", task: true },
  { name: TASK_FAILED, kind: "notified", timeout: "event", task: true },
  { name: "task.auth_required", kind: "notified", timeout: "event", task: true },
  { name: TASK_ROUTE, kind: "consulted", timeout: "route", answer: "lines" },
  { name: TASK_PLACEMENT, kind: "consulted", timeout: "placement", answer: "json" },
  { name: TASK_HOSTS, kind: "consulted", timeout: "hosts", answer: "json" },
  { name: PRE_TOOL_CALL, kind: "consulted", timeout: "tool", answer: "json", tools: true },
  { name: POST_TOOL_CALL, kind: "notified", timeout: "tool", tools: true },
];

const BY_NAME = new Map(EVENTS.map((spec) => [spec.name, spec]));

/**
 * The row of `name`; for a name not in the table, a notified event under the event timeout.
 *
 * @example
 * ```ts
 * import { eventSpec } from "./events.ts";
 * console.assert(eventSpec("task.route").timeout === "route");
 * console.assert(eventSpec("deploy.finished").kind === "notified");
 * ```
 */
export function eventSpec(name: string): EventSpec {
  return BY_NAME.get(name) ?? { name, kind: "notified", timeout: "event" };
}

/** Whether `name` is in the table. */
export function isKnownEvent(name: string): boolean {
  return BY_NAME.has(name);
}

/**
 * Whether the hooks of `name` may be persistent: a notified hook reads one line per event, a
 * consulted one must answer each request on one JSON line.
 */
export function mayBePersistent(name: string): boolean {
  const spec = eventSpec(name);
  return spec.kind === "notified" || spec.answer === "json";
}

/** The names of every event in the table. */
export const KNOWN_EVENTS: readonly string[] = EVENTS.map((spec) => spec.name);

/** The task events ty fires (`fire` suggests them, the legacy hooks dir is named after them). */
export const TASK_EVENTS: readonly string[] = EVENTS
  .filter((spec) => spec.kind === "notified" && spec.task)
  .map((spec) => spec.name);

/** The events whose hooks judge tool calls, the only ones that take `tools`. */
export const TOOL_EVENTS: readonly string[] = EVENTS
  .filter((spec) => spec.tools)
  .map((spec) => spec.name);

/**
 * The task statuses that fire an event, and which (ty's OnStatusChange); `blocked` fires
 * `task.failed` instead when the message mentions "fail" or "error".
 */
export const STATUS_EVENTS: Readonly<Record<string, string>> = Object.freeze({
  queued: TASK_STARTED,
  processing: TASK_STARTED,
  done: TASK_DONE,
  blocked: TASK_BLOCKED,
});

/**
 * The event a status (and its message) fires, or null for none: `queued`/`processing` ->
 * `task.started`; `done` -> `task.done`; `blocked` -> `task.failed` when the message mentions
 * "fail" or "error" (any case), else `task.blocked`.
 *
 * @example
 * ```ts
 * import { statusEvent } from "./events.ts";
 * console.assert(statusEvent("blocked", "Build ERROR") === "task.failed");
 * console.assert(statusEvent("backlog") === null);
 * ```
 */
export function statusEvent(status: string, message = ""): string | null {
  // Own keys only: a status named "toString" fires nothing.
  if (!Object.hasOwn(STATUS_EVENTS, status)) return null;
  const event = STATUS_EVENTS[status];
  return event === TASK_BLOCKED && /fail|error/i.test(message) ? TASK_FAILED : event;
}

// The task an event carries: read from the input, and given to hooks in their environment.

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
 * import { validateTask } from "./events.ts";
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
 * import { parseTask } from "./events.ts";
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
