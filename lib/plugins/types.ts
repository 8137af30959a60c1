/**
 * The loaded plugin index: what every other part of tyhooks works from. Paths are absolute.
 *
 * @module
 */

/** An action a user can invoke. */
export interface PluginAction {
  /** Unique within the plugin. */
  id: string;
  /** Shown to users; defaults to `id`. */
  label: string;
  /** Absolute path of the script (checked: a regular executable file inside the plugin dir). */
  command: string;
}

/** Restart policies of a service. */
export type RestartPolicy = "always" | "on-failure" | "never";

/** A long-running, supervised service. */
export interface PluginService {
  /** Unique within the plugin. */
  name: string;
  /** Run with `sh -c`. */
  command: string;
  /** Absolute working directory (the plugin dir, or its `cwd` inside it). */
  cwd: string;
  /** `KEY=VALUE` entries, validated. */
  env: string[];
  /** Default `on-failure`. */
  restart: RestartPolicy;
}

/** One loaded plugin. */
export interface Plugin {
  name: string;
  version: string;
  description: string;
  /** Absolute plugin directory. */
  dir: string;
  /** Event -> absolute script path. */
  hooks: Record<string, string>;
  actions: PluginAction[];
  services: PluginService[];
  /** Workflow names (file stems under `workflows/`), sorted. */
  workflows: string[];
  /** Routine names (dirs under `routines/` holding `prompt.md`), sorted. */
  routines: string[];
}

/** A problem found while loading; the plugin or entry it concerns was skipped or dropped. */
export interface LoadWarning {
  /** The plugin's name, or null when unknown (e.g. unreadable manifest). */
  plugin: string | null;
  /** The file concerned (usually the manifest). */
  path: string;
  line: number | null;
  column: number | null;
  message: string;
}

/** The result of loading a plugins dir. */
export interface PluginIndex {
  /** The directory that was searched. */
  dir: string;
  /** Sorted by name. */
  plugins: Plugin[];
  warnings: LoadWarning[];
}
