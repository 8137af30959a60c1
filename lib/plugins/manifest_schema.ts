/**
 * The zod schema of `plugin.yaml`: the single source of truth for what a manifest may hold. The
 * strict lint (`plugins validate`) and the JSON Schema (`plugins schema`) use it whole; the
 * forgiving loader parses an entry it finds odd against the same pieces, to word what is wrong.
 *
 * This module imports zod statically: the loader imports it only when it needs it.
 *
 * @module
 */

import { z } from "npm:zod@^4.1.0";
import type { Same, Schema } from "../wire/json.ts";
import { ENV_ENTRY, RESTART_POLICIES, type RestartPolicy } from "./types.ts";
import { KNOWN_EVENTS } from "../events.ts";

const text = z.string().min(1);

/** A hook or action script: a path relative to the plugin dir. */
export const ScriptSchema = text.meta({
  description: "Path of an executable file, relative to the plugin dir (it must stay inside it)",
});

/** The `hooks` map: event name -> script. */
export const HooksSchema = z.record(text, ScriptSchema).meta({
  description: `Event -> script. Events: ${KNOWN_EVENTS.join(", ")} (others may be fired)`,
});

/** One entry of `actions`: a {@linkcode ManifestAction}. */
export const ActionSchema = z.strictObject({
  id: text.meta({ description: "Unique within the plugin" }),
  label: z.string().optional().meta({ description: "Shown to users; defaults to the id" }),
  command: ScriptSchema,
}).meta({ description: "An action a user invokes" }) satisfies z.ZodType<ManifestAction>;

/** One entry of a service's `env`: `KEY=VALUE`. */
export const EnvEntrySchema = z.string().regex(ENV_ENTRY, {
  error: "must be KEY=VALUE (KEY: letters, digits and _, not starting with a digit)",
}).meta({
  description: "KEY=VALUE, KEY made of letters, digits and _ (not starting with a digit)",
});

/** A service's restart policy. */
export const RestartSchema = z.enum(RESTART_POLICIES).meta({
  description: "When to restart the service (tyhooks extension); default on-failure",
});

/** One entry of `services`: a {@linkcode ManifestService}. */
export const ServiceSchema = z.strictObject({
  name: text.meta({ description: "Unique within the plugin" }),
  command: text.meta({ description: "Run with sh -c" }),
  cwd: z.string().optional().meta({
    description: "Working directory relative to the plugin dir (it must stay inside it)",
  }),
  env: z.array(EnvEntrySchema).optional(),
  restart: RestartSchema.optional(),
}).meta({ description: "A long-running, supervised process" }) satisfies z.ZodType<ManifestService>;

/** One hook's settings under `tyhooks:`: a {@linkcode ManifestHookSettings}. */
export const HookSettingsSchema = z.strictObject({
  tools: text.optional().meta({
    description:
      "Tool hooks only: a regular expression on the tool name; other tools skip the hook",
  }),
  timeout: z.union([z.string(), z.number()]).optional().meta({
    description: "This hook's timeout: 500ms, 15s, 2m or plain seconds",
  }),
  persistent: z.boolean().optional().meta({
    description: "Run by the daemon as one long-lived process (JSON-answer hooks only)",
  }),
  max_procs: z.int().min(1).optional().meta({
    description: "Persistent hooks only: processes in the pool; default 1",
  }),
}).meta({
  description: "One hook's settings (tyhooks extension)",
}) satisfies z.ZodType<ManifestHookSettings>;

/** The whole manifest, a {@linkcode Manifest}, strict: unknown keys are errors. */
export const ManifestSchema = z.strictObject({
  name: text.meta({ description: "Unique plugin name" }),
  version: z.string().optional(),
  description: z.string().optional(),
  hooks: HooksSchema.optional(),
  actions: z.array(ActionSchema).optional(),
  services: z.array(ServiceSchema).optional(),
  tyhooks: z.record(text, HookSettingsSchema).optional().meta({
    description: "Event -> that hook's settings (tyhooks extension; ty ignores this key)",
  }),
}).meta({
  title: "tyhooks plugin manifest (plugin.yaml)",
  description: "A ty plugin: a directory holding this file and executable scripts",
}) satisfies z.ZodType<Manifest>;

/**
 * A `plugin.yaml`, strict: an unknown key is an issue (`plugins validate`). The library exports
 * it as `ManifestSchema`, typed as its `Schema` so that its API names no zod type.
 */
export const LibraryManifestSchema: Schema<Manifest> = ManifestSchema;

/** An action's fields, unknown keys ignored (the forgiving loader leaves them to the lint). */
export const LooseActionSchema = z.object(ActionSchema.shape);

/** A service's fields, unknown keys ignored. */
export const LooseServiceSchema = z.object(ServiceSchema.shape);

// The schema validates, the interfaces document: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof ActionSchema>, ManifestAction>;
true satisfies Same<z.output<typeof ServiceSchema>, ManifestService>;
true satisfies Same<z.output<typeof HookSettingsSchema>, ManifestHookSettings>;
true satisfies Same<z.output<typeof ManifestSchema>, Manifest>;

/** The keys a manifest may have, for "did you mean" hints. */
export const MANIFEST_KEYS: readonly string[] = Object.keys(ManifestSchema.shape);

/**
 * Generates the JSON Schema of `plugin.yaml`, for editors and CI linters. Draft-07: what the
 * YAML language server (VS Code, Neovim, Helix) and most validators read in full.
 *
 * @example
 * ```ts
 * import { manifestJsonSchema } from "./manifest_schema.ts";
 * const schema = await manifestJsonSchema();
 * console.assert("name" in (schema.properties as object));
 * console.assert(schema.$schema === "http://json-schema.org/draft-07/schema#");
 * ```
 */
export function manifestJsonSchema(): Promise<Record<string, unknown>> {
  // "input": what a person writes, optional fields and all.
  const schema = z.toJSONSchema(ManifestSchema, { io: "input", target: "draft-7" });
  return Promise.resolve(schema as Record<string, unknown>);
}

// The documented types `ManifestSchema` is checked against; `import type` of them loads no zod.

/** One entry of a manifest's `actions`: something a user runs with `plugins run`. */
export interface ManifestAction {
  /** Unique within the plugin; what `plugins run <plugin> <action>` names. */
  id: string;
  /** Shown to users; defaults to the id. */
  label?: string;
  /** The script: an executable file, relative to the plugin dir (it must stay inside it). */
  command: string;
}

/**
 * One entry of a manifest's `services`: a long-running process that `services run` and
 * `serve --services` supervise.
 */
export interface ManifestService {
  /** Unique within the plugin. */
  name: string;
  /** Run with `sh -c`. */
  command: string;
  /** Working directory, relative to the plugin dir (it must stay inside it); default the dir. */
  cwd?: string;
  /** `KEY=VALUE` entries added to its environment, KEY made of letters, digits and `_`. */
  env?: string[];
  /** When to restart it (a tyhooks extension); default `on-failure`. */
  restart?: RestartPolicy;
}

/** One hook's settings under the manifest's `tyhooks:` key (a tyhooks extension ty ignores). */
export interface ManifestHookSettings {
  /** Tool hooks only: a regular expression on the tool name; other tools skip the hook. */
  tools?: string;
  /** This hook's timeout: `500ms`, `15s`, `2m`, or plain seconds (a number or text). */
  timeout?: string | number;
  /** Run by the daemon as one long-lived process (JSON-answer hooks only); default false. */
  persistent?: boolean;
  /** Persistent hooks only: processes in the pool; default 1. */
  max_procs?: number;
}

/**
 * A `plugin.yaml` as the strict schema accepts it: any other key is an error for
 * `plugins validate` (the loader leaves it out of the plugin).
 */
export interface Manifest {
  /** The plugin's name, unique among the loaded plugins; required and not empty. */
  name: string;
  /** Free-form, e.g. `0.1.0`. */
  version?: string;
  /** What the plugin does. */
  description?: string;
  /**
   * Event -> script, an executable file relative to the plugin dir (it must stay inside it).
   * Events ty and tyhooks send are listed in `lib/events.ts`; `fire` sends any other name too.
   */
  hooks?: Record<string, string>;
  /** Actions a user runs. */
  actions?: ManifestAction[];
  /** Long-running, supervised processes. */
  services?: ManifestService[];
  /** Event -> that hook's settings (a tyhooks extension; ty's loader ignores the key). */
  tyhooks?: Record<string, ManifestHookSettings>;
}
