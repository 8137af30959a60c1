/**
 * The loaded plugin index: what every other part of tyhooks works from. Paths are absolute.
 *
 * @module
 */

// Defined with the services wire format, so that lib/wire/ imports nothing from lib/plugins/.
import type { RestartPolicy } from "../wire/services.ts";
export type { RestartPolicy };

/** Names of the restart policies, in the order the docs list them. */
export const RESTART_POLICIES = [
  "always",
  "on-failure",
  "never",
] as const satisfies readonly RestartPolicy[];

const NAME = "[A-Za-z_][A-Za-z0-9_]*";
/** A variable name a shell accepts: letters, digits and `_`, not starting with a digit. */
export const ENV_KEY: RegExp = new RegExp(`^${NAME}$`);
/** What a service `env` entry must look like: `KEY=VALUE`, KEY an {@linkcode ENV_KEY}, no NUL. */
export const ENV_ENTRY: RegExp = new RegExp(`^${NAME}=[^\\0]*$`);

/** An action a user can invoke. */
export interface PluginAction {
  /** Unique within the plugin. */
  id: string;
  /** Shown to users; defaults to `id`. */
  label: string;
  /** Absolute path of the script (checked: a regular executable file inside the plugin dir). */
  command: string;
}

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
  /** Unique among the loaded plugins. */
  name: string;
  /** From the manifest; empty when it has none. */
  version: string;
  /** From the manifest; empty when it has none. */
  description: string;
  /** Absolute plugin directory. */
  dir: string;
  /** Event -> absolute script path. */
  hooks: Record<string, string>;
  /** The usable actions, in manifest order. */
  actions: PluginAction[];
  /** The usable services, in manifest order. */
  services: PluginService[];
  /** Workflow names (file stems under `workflows/`), sorted. */
  workflows: string[];
  /** Routine names (dirs under `routines/` holding `prompt.md`), sorted. */
  routines: string[];
  /**
   * Event -> the hook's own settings, from the manifest's `tyhooks:` key (a tyhooks extension);
   * only hooked events appear, only valid settings are kept. Absent or `{}` means defaults.
   */
  settings?: Record<string, HookSettings>;
}

/**
 * One hook's settings from the manifest's `tyhooks:` key; an absent field keeps the default.
 * `hookSettings()` and `toolMatches()` in `hook_settings.ts` read them.
 */
export interface HookSettings {
  /** Tool hooks only: a regular expression (source) on the tool name; other tools skip the hook. */
  tools?: string;
  /** This hook's own timeout, in ms; an explicit `--timeout` overrides it. */
  timeoutMs?: number;
  /** Run by the daemon as one long-lived process answering a request a line. Default false. */
  persistent?: boolean;
  /** Persistent hooks only: processes in the hook's pool. Default 1. */
  maxProcs?: number;
}

/** A problem found while loading; the plugin or entry it concerns was skipped or dropped. */
export interface LoadWarning {
  /** The plugin's name, or null when unknown (e.g. unreadable manifest). */
  plugin: string | null;
  /** The file concerned (usually the manifest). */
  path: string;
  /** 1-based line in `path`, or null when unknown. */
  line: number | null;
  /** 1-based column in `path`, or null when unknown. */
  column: number | null;
  /** What is wrong, in the project's message style. */
  message: string;
}

/**
 * The result of loading a plugins dir. Build one by hand to drive a `Runner` without a
 * plugins dir.
 */
export interface PluginIndex {
  /** The directory that was searched. */
  dir: string;
  /** Sorted by name. */
  plugins: Plugin[];
  /** What was skipped or dropped while loading, and why. */
  warnings: LoadWarning[];
}

/** Notes that the load's result depends on `path` (present or missing), before reading it. */
export type Observe = (path: string) => void;

/** A plugin dir as discovery found it. */
export interface FoundDir {
  /** Absolute, as reached from the plugins dir. */
  path: string;
  /** Its real path. */
  real: string;
  /** Reached through a symlink below the plugins dir. */
  linked: boolean;
  /** Its `stat`. */
  info: Deno.FileInfo;
  /** The `lstat` of its `plugin.yaml`. */
  manifest: Deno.FileInfo;
}
