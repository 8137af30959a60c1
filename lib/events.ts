/**
 * The events: one table of every event tyhooks fires or consults, which everything else reads, so
 * a new event is a new row; any other name is a notified event (`fire` sends any string). Also
 * the timeouts SPEC sets, and the task statuses that fire an event (ty's OnStatusChange).
 *
 * @module
 */

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
  /** `pre_tool_call` / `post_tool_call` hooks, and an agent's `agent.prompt` / `agent.stop`: 30 s. */
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
export const AGENT_PROMPT = "agent.prompt";
export const AGENT_STOP = "agent.stop";
export const AGENT_SESSION_START = "agent.session_start";
export const AGENT_SESSION_END = "agent.session_end";
export const AGENT_NOTIFICATION = "agent.notification";
export const AGENT_COMPACT = "agent.compact";

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
  // A coding agent's own events (lib/agents/table.ts maps each agent's names onto these). A
  // prompt or a stop is judged like a tool call; the rest are told.
  { name: AGENT_PROMPT, kind: "consulted", timeout: "tool", answer: "json" },
  { name: AGENT_STOP, kind: "consulted", timeout: "tool", answer: "json" },
  { name: AGENT_SESSION_START, kind: "notified", timeout: "event" },
  { name: AGENT_SESSION_END, kind: "notified", timeout: "event" },
  { name: AGENT_NOTIFICATION, kind: "notified", timeout: "event" },
  { name: AGENT_COMPACT, kind: "notified", timeout: "event" },
];

const BY_NAME = new Map(EVENTS.map((spec) => [spec.name, spec]));

/** The row of `name`; for a name not in the table, a notified event under the event timeout. */
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

/** The event a status (and its message) fires, as {@linkcode STATUS_EVENTS} says, or null. */
export function statusEvent(status: string, message = ""): string | null {
  // Own keys only: a status named "toString" fires nothing.
  if (!Object.hasOwn(STATUS_EVENTS, status)) return null;
  const event = STATUS_EVENTS[status];
  return event === TASK_BLOCKED && /fail|error/i.test(message) ? TASK_FAILED : event;
}
