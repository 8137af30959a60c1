/**
 * The schemas of every format tyhooks reads or writes, for `lib/mod.ts`. Each is the zod schema
 * tyhooks itself validates with (the single source of truth), typed as a {@linkcode Schema} of its
 * documented interface: the public API names no zod type. Importing this module loads zod; the CLI
 * never imports it.
 *
 * @module
 */

import type { Schema } from "./schema_type.ts";
import type { Task } from "./task.ts";
import * as task from "./task_schema.ts";
import type { Manifest } from "./plugins/manifest.ts";
import * as manifest from "./plugins/manifest_schema.ts";
import type { PlacementAnswer, PlacementRequest } from "./wire/placement.ts";
import * as placement from "./wire/placement.ts";
import type { PostToolCall, PreToolAnswer, ToolCall, ToolHookRequest } from "./wire/tool.ts";
import * as tool from "./wire/tool.ts";
import type { HostFacts } from "./hosts/probe_schema.ts";
import * as probe from "./hosts/probe_schema.ts";
import type {
  LastExit,
  ServiceEntry,
  ServicesList,
  ServicesStatus,
  ServiceState,
  ServiceStatus,
} from "./services/schema.ts";
import * as services from "./services/schema.ts";
import type { EventBody, PlacementBody, StatusChangeBody, TaskBody } from "./serve/schemas.ts";
import * as bodies from "./serve/schemas.ts";

/**
 * A task (`--task`, `--task-json`, the daemon's bodies): unknown fields dropped, missing ones
 * empty.
 *
 * @example
 * ```ts
 * import { TaskSchema } from "./schemas.ts";
 * const task = TaskSchema.parse({ id: 7, title: "Fix it", extra: true });
 * console.assert(task.id === 7 && task.status === "" && !("extra" in task));
 * ```
 */
export const TaskSchema: Schema<Task> = task.TaskSchema;

/**
 * A `plugin.yaml`, strict: an unknown key is an issue (`plugins validate`).
 *
 * @example
 * ```ts
 * import { ManifestSchema } from "./schemas.ts";
 * console.assert(ManifestSchema.safeParse({ name: "x", hooks: { "task.done": "a.sh" } }).success);
 * const typo = ManifestSchema.safeParse({ name: "x", hook: {} });
 * console.assert(!typo.success && typo.error.issues[0].message.includes("hook"));
 * ```
 */
export const ManifestSchema: Schema<Manifest> = manifest.ManifestSchema;

/**
 * The request a `task.placement` handler reads on stdin.
 *
 * @example
 * ```ts
 * import { PlacementRequestSchema } from "./schemas.ts";
 * const request = PlacementRequestSchema.parse({ event: "task.placement", task: { id: 1 } });
 * console.assert(request.task.title === "" && request.task.remote_required === undefined);
 * ```
 */
export const PlacementRequestSchema: Schema<PlacementRequest> = placement.PlacementRequestSchema;

/**
 * A `task.placement` handler's answer: strings only, trimmed, missing or null = empty; extra keys
 * dropped.
 *
 * @example
 * ```ts
 * import { PlacementAnswerSchema } from "./schemas.ts";
 * const answer = PlacementAnswerSchema.parse({ target: " gpu-1 ", workdir: "~/src", cost: 3 });
 * console.assert(answer.target === "gpu-1" && answer.reason === "");
 * ```
 */
export const PlacementAnswerSchema: Schema<PlacementAnswer> = placement.PlacementAnswerSchema;

/**
 * A tool call as a host describes it (`POST /v1/tool/pre`); parsing fills in the defaults.
 *
 * @example
 * ```ts
 * import { ToolCallSchema } from "./schemas.ts";
 * const call = ToolCallSchema.parse({ tool: "bash", args: { command: "ls" } });
 * console.assert(call.platform === "" && call.user_id === "");
 * console.assert(!ToolCallSchema.safeParse({ tool: "" }).success);
 * ```
 */
export const ToolCallSchema: Schema<Required<ToolCall>> = tool.ToolCallSchema;

/**
 * A finished tool call (`POST /v1/tool/post`); parsing fills in the defaults.
 *
 * @example
 * ```ts
 * import { PostToolCallSchema } from "./schemas.ts";
 * const call = PostToolCallSchema.parse({ tool: "bash", result: "ok" });
 * console.assert(call.error === "" && call.result === "ok");
 * ```
 */
export const PostToolCallSchema: Schema<Required<PostToolCall>> = tool.PostToolCallSchema;

/**
 * The request a `pre_tool_call` or `post_tool_call` hook reads on stdin.
 *
 * @example
 * ```ts
 * import { ToolHookRequestSchema } from "./schemas.ts";
 * const request = { hook: "pre_tool_call", tool: "bash", args: {}, platform: "", user_id: "" };
 * console.assert(ToolHookRequestSchema.safeParse(request).success);
 * ```
 */
export const ToolHookRequestSchema: Schema<ToolHookRequest> = tool.ToolHookRequestSchema;

/**
 * A `pre_tool_call` hook's answer; the action is trimmed and lower-cased first.
 *
 * @example
 * ```ts
 * import { PreToolAnswerSchema } from "./schemas.ts";
 * const answer = PreToolAnswerSchema.parse({ action: " Block ", reason: "rm -rf" });
 * console.assert(answer.action === "block" && answer.reason === "rm -rf");
 * ```
 */
export const PreToolAnswerSchema: Schema<PreToolAnswer> = tool.PreToolAnswerSchema;

/**
 * What `tyhooks probe` prints and `pick-host` reads; unknown keys dropped, so a newer tyhooks on
 * an agent host can add facts.
 *
 * @example
 * ```ts
 * import { HostFactsSchema } from "./schemas.ts";
 * import { probeHost } from "./hosts/probe.ts";
 * console.assert(HostFactsSchema.safeParse(await probeHost({ workdir: "/" })).success);
 * ```
 */
export const HostFactsSchema: Schema<HostFacts> = probe.HostFactsSchema;

/**
 * One entry of `services list --json`.
 *
 * @example
 * ```ts
 * import { ServiceEntrySchema } from "./schemas.ts";
 * const entry = { plugin: "p", name: "s", command: "./srv", cwd: "/p", restart: "always" };
 * console.assert(ServiceEntrySchema.safeParse(entry).success);
 * ```
 */
export const ServiceEntrySchema: Schema<ServiceEntry> = services.ServiceEntrySchema;

/**
 * The `services list --json` document.
 *
 * @example
 * ```ts
 * import { ServicesListSchema } from "./schemas.ts";
 * console.assert(ServicesListSchema.safeParse({ services: [] }).success);
 * ```
 */
export const ServicesListSchema: Schema<ServicesList> = services.ServicesListSchema;

/**
 * How a service's last run ended.
 *
 * @example
 * ```ts
 * import { LastExitSchema } from "./schemas.ts";
 * const exit = { code: null, signal: "SIGKILL", error: null, uptime_ms: 12 };
 * console.assert(LastExitSchema.safeParse(exit).success);
 * ```
 */
export const LastExitSchema: Schema<LastExit> = services.LastExitSchema;

/**
 * A service's state.
 *
 * @example
 * ```ts
 * import { ServiceStateSchema } from "./schemas.ts";
 * console.assert(ServiceStateSchema.safeParse("backoff").success);
 * console.assert(!ServiceStateSchema.safeParse("sleeping").success);
 * ```
 */
export const ServiceStateSchema: Schema<ServiceState> = services.ServiceStateSchema;

/**
 * One supervised service, as `GET /v1/services` lists it.
 *
 * @example
 * ```ts
 * import { ServiceStatusSchema } from "./schemas.ts";
 * const status = { plugin: "p", name: "s", state: "running", pid: 42, restarts: 0, last_exit: null };
 * console.assert(ServiceStatusSchema.safeParse(status).success);
 * ```
 */
export const ServiceStatusSchema: Schema<ServiceStatus> = services.ServiceStatusSchema;

/**
 * The `GET /v1/services` document.
 *
 * @example
 * ```ts
 * import { ServicesStatusSchema } from "./schemas.ts";
 * console.assert(ServicesStatusSchema.safeParse({ services: [] }).success);
 * ```
 */
export const ServicesStatusSchema: Schema<ServicesStatus> = services.ServicesStatusSchema;

/**
 * The body of `POST /v1/route` and `POST /v1/actions/{plugin}/{action}`.
 *
 * @example
 * ```ts
 * import { TaskBodySchema } from "./schemas.ts";
 * console.assert(TaskBodySchema.parse({}).task === undefined);
 * console.assert(TaskBodySchema.parse({ task: { id: 3 } }).task?.title === "");
 * ```
 */
export const TaskBodySchema: Schema<TaskBody> = bodies.TaskBodySchema;

/**
 * The body of `POST /v1/placement`.
 *
 * @example
 * ```ts
 * import { PlacementBodySchema } from "./schemas.ts";
 * console.assert(PlacementBodySchema.parse({}).remote_required === false);
 * ```
 */
export const PlacementBodySchema: Schema<PlacementBody> = bodies.PlacementBodySchema;

/**
 * The body of `POST /v1/events/{event}`.
 *
 * @example
 * ```ts
 * import { EventBodySchema } from "./schemas.ts";
 * console.assert(EventBodySchema.parse({ message: "ok" }).message === "ok");
 * ```
 */
export const EventBodySchema: Schema<EventBody> = bodies.EventBodySchema;

/**
 * The body of `POST /v1/status-change`: `status` is required.
 *
 * @example
 * ```ts
 * import { StatusChangeBodySchema } from "./schemas.ts";
 * console.assert(!StatusChangeBodySchema.safeParse({}).success);
 * console.assert(StatusChangeBodySchema.parse({ status: "done" }).message === "");
 * ```
 */
export const StatusChangeBodySchema: Schema<StatusChangeBody> = bodies.StatusChangeBodySchema;
