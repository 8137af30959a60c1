/**
 * What `plugin.yaml` may hold, as documented types. `ManifestSchema` (`manifest_schema.ts`)
 * validates it and is checked at compile time to describe exactly these; this module holds no
 * code, so reading the types never loads zod.
 *
 * @module
 */

import type { RestartPolicy } from "./types.ts";

/**
 * One entry of a manifest's `actions`: something a user runs with `plugins run`.
 */
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

/**
 * One hook's settings under the manifest's `tyhooks:` key (a tyhooks extension ty ignores).
 */
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
   * Events ty and tyhooks send: `task.started`, `task.done`, `task.blocked`, `task.failed`,
   * `task.auth_required`, `task.route`, `task.placement`, `pre_tool_call`, `post_tool_call`;
   * `fire` sends any other name too.
   */
  hooks?: Record<string, string>;
  /** Actions a user runs. */
  actions?: ManifestAction[];
  /** Long-running, supervised processes. */
  services?: ManifestService[];
  /** Event -> that hook's settings (a tyhooks extension; ty's loader ignores the key). */
  tyhooks?: Record<string, ManifestHookSettings>;
}
