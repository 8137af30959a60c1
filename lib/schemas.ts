/**
 * The schemas of every format tyhooks reads or writes, for `lib/mod.ts`. Each is the zod schema
 * tyhooks itself validates with (the single source of truth), typed as a {@linkcode Schema} of its
 * documented interface: the public API names no zod type. Importing this module loads zod; the CLI
 * never imports it.
 *
 * @module
 */

import type { Schema } from "./wire/schema.ts";
import type { Task } from "./task.ts";
import * as task from "./wire/task.ts";
import type { Manifest } from "./plugins/manifest_schema.ts";
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
} from "./wire/services.ts";
import * as services from "./wire/services.ts";
import type { EventBody, PlacementBody, StatusChangeBody, TaskBody } from "./wire/bodies.ts";
import * as bodies from "./wire/bodies.ts";

/**
 * A task (`--task`, `--task-json`, the daemon's bodies): unknown fields dropped, missing ones
 * empty.
 */
export const TaskSchema: Schema<Task> = task.TaskSchema;

/** A `plugin.yaml`, strict: an unknown key is an issue (`plugins validate`). */
export const ManifestSchema: Schema<Manifest> = manifest.ManifestSchema;

/** The request a `task.placement` handler reads on stdin. */
export const PlacementRequestSchema: Schema<PlacementRequest> = placement.PlacementRequestSchema;

/**
 * A `task.placement` handler's answer: strings only, trimmed, missing or null = empty; extra keys
 * dropped.
 */
export const PlacementAnswerSchema: Schema<PlacementAnswer> = placement.PlacementAnswerSchema;

/** A tool call as a host describes it (`POST /v1/tool/pre`); parsing fills in the defaults. */
export const ToolCallSchema: Schema<Required<ToolCall>> = tool.ToolCallSchema;

/** A finished tool call (`POST /v1/tool/post`); parsing fills in the defaults. */
export const PostToolCallSchema: Schema<Required<PostToolCall>> = tool.PostToolCallSchema;

/** The request a `pre_tool_call` or `post_tool_call` hook reads on stdin. */
export const ToolHookRequestSchema: Schema<ToolHookRequest> = tool.ToolHookRequestSchema;

/** A `pre_tool_call` hook's answer; the action is trimmed and lower-cased first. */
export const PreToolAnswerSchema: Schema<PreToolAnswer> = tool.PreToolAnswerSchema;

/**
 * What `tyhooks probe` prints and `pick-host` reads; unknown keys dropped, so a newer tyhooks on
 * an agent host can add facts.
 */
export const HostFactsSchema: Schema<HostFacts> = probe.HostFactsSchema;

/** One entry of `services list --json`. */
export const ServiceEntrySchema: Schema<ServiceEntry> = services.ServiceEntrySchema;

/** The `services list --json` document. */
export const ServicesListSchema: Schema<ServicesList> = services.ServicesListSchema;

/** How a service's last run ended. */
export const LastExitSchema: Schema<LastExit> = services.LastExitSchema;

/** A service's state. */
export const ServiceStateSchema: Schema<ServiceState> = services.ServiceStateSchema;

/** One supervised service, as `GET /v1/services` lists it. */
export const ServiceStatusSchema: Schema<ServiceStatus> = services.ServiceStatusSchema;

/** The `GET /v1/services` document. */
export const ServicesStatusSchema: Schema<ServicesStatus> = services.ServicesStatusSchema;

/** The body of `POST /v1/route` and `POST /v1/actions/{plugin}/{action}`. */
export const TaskBodySchema: Schema<TaskBody> = bodies.TaskBodySchema;

/** The body of `POST /v1/placement`. */
export const PlacementBodySchema: Schema<PlacementBody> = bodies.PlacementBodySchema;

/** The body of `POST /v1/events/{event}`. */
export const EventBodySchema: Schema<EventBody> = bodies.EventBodySchema;

/** The body of `POST /v1/status-change`: `status` is required. */
export const StatusChangeBodySchema: Schema<StatusChangeBody> = bodies.StatusChangeBodySchema;
