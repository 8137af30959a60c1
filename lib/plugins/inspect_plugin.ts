/**
 * Loads one plugin dir, forgivingly: reads the manifest, keeps every usable entry and records a
 * problem (with its line and column) for every one it drops. Whether the plugin as a whole is
 * skipped is decided here too; name clashes between plugins are decided by the caller. Also the
 * strict half of `plugins validate`, which reads the same manifest against the strict schema.
 *
 * This module pulls in zod and yaml, so it is only ever imported dynamically.
 *
 * @module
 */

import { observe } from "./_observe.ts";
import { z } from "zod";
import {
  describeIssue,
  dropped,
  kindOf,
  outsideDir,
  pathText,
  type Problem,
  quote,
  REASONS,
  skipped,
  unknownEvent,
  unknownKey,
} from "./messages.ts";
import { checkCwd, checkScript, hasControlCharacters, type PluginRoot } from "./script_path.ts";
import { dirname, extname, join, relative } from "../_path.ts";
import { byCodeUnit } from "./load.ts";
import type { LoadWarning, Plugin, PluginAction, PluginService } from "./types.ts";
import {
  ActionSchema,
  ENV_ENTRY,
  HooksSchema,
  KNOWN_EVENTS,
  MANIFEST_KEYS,
  ManifestSchema,
  ServiceSchema,
} from "./manifest_schema.ts";
import { locate, type ParsedManifest, type Position, readManifest } from "./read_manifest.ts";
import { closest, isRecord, unsafeMode } from "../_util.ts";
import { buildHookSettings, SETTING_KEYS } from "./hook_settings.ts";

/** Everything learned about one plugin dir. */
export interface PluginReport {
  /** Absolute plugin dir. */
  dir: string;
  /** The dir relative to the plugins dir, for messages. */
  relDir: string;
  /** Absolute path of its `plugin.yaml`. */
  manifest: string;
  /** The plugin's name, when the manifest gives a usable one. */
  name: string | null;
  /** Where the name is written, for a duplicate-name warning. */
  nameAt: Position | null;
  /** The plugin, or null when it is skipped. */
  plugin: Plugin | null;
  /** One warning per dropped entry. */
  problems: LoadWarning[];
  /** The one warning of a skipped plugin, else null. */
  skip: LoadWarning | null;
  /** What only `plugins validate` reports (the loader accepts it, as ty does). */
  lint: LoadWarning[];
  /** The parsed manifest, for the strict lint; null when it could not be parsed. */
  parsed: ParsedManifest | null;
}

/**
 * Loads the plugin in `dir`. Never throws for anything a plugin contains. Requires
 * `--allow-read`.
 *
 * @param root The plugins dir (absolute), for relative names in messages.
 * @param dir The plugin dir (absolute), holding `plugin.yaml`.
 * @param options The abort signal, which ends the manifest's read.
 */
export async function inspectPlugin(
  root: string,
  dir: string,
  options: { signal?: AbortSignal } = {},
): Promise<PluginReport> {
  const manifest = join(dir, "plugin.yaml");
  const report: PluginReport = {
    dir,
    relDir: relative(root, dir) || ".",
    manifest,
    name: null,
    nameAt: null,
    plugin: null,
    problems: [],
    skip: null,
    lint: [],
    parsed: null,
  };
  const warning = (message: string, at: Position | null): LoadWarning => ({
    plugin: report.name,
    path: manifest,
    line: at?.line ?? null,
    column: at?.column ?? null,
    message,
  });
  const skip = (reason: string, at: Position | null) => {
    report.skip = warning(skipped(report.name, report.relDir, reason), at);
    return report;
  };

  const read = await readManifest(manifest, { signal: options.signal });
  if (!read.ok) return skip(read.message, read.at);
  report.parsed = read;
  const data = read.lenient;
  if (data === null || data === undefined) return skip(REASONS.empty, { line: 1, column: 1 });
  if (!isRecord(data)) return skip(REASONS.notAMap, locate(read, []));
  const nameAt = locate(read, ["name"]);
  const name = data.name;
  if (name === undefined || name === null || name === "") return skip(REASONS.noName, nameAt);
  if (typeof name !== "string") return skip(REASONS.nameNotText, nameAt);
  if (hasControlCharacters(name)) return skip(REASONS.nameControl, nameAt);
  report.name = name;
  report.nameAt = nameAt;

  let realDir: string;
  observe(dir);
  try {
    realDir = Deno.realPathSync(dir);
  } catch (error) {
    return skip(`cannot resolve the plugin dir: ${(error as Error).message}`, null);
  }
  const { parts, problems, notes } = buildPlugin({ dir, realDir }, data, read.typed);
  report.problems = problems.map((p) => warning(p.message, locate(read, p.at, { key: p.key })));
  // StrictModes: whoever can write the manifest, the plugin dir or a dir above it (up to the
  // plugins dir, where another plugin could be put in its place) decides what runs.
  const unsafeParts: string[] = [];
  const check = (what: string, path: string) => {
    let unsafe: ReturnType<typeof unsafeMode> = null;
    try {
      unsafe = unsafeMode(Deno.statSync(path), path);
    } catch {
      // Gone since it was resolved: nothing left to warn about.
    }
    if (unsafe !== null) unsafeParts.push(`${what} ${unsafe.reason} (hint: ${unsafe.hint})`);
  };
  check(`Plugin dir ${quote(report.relDir)}`, realDir);
  check(`Manifest ${quote(join(report.relDir, "plugin.yaml"))}`, join(realDir, "plugin.yaml"));
  for (let up = dirname(dir); up.length >= root.length && up !== dir; up = dirname(up)) {
    check(`Dir ${quote(relative(root, up) || root)} above plugin ${quote(report.relDir)}`, up);
    if (up === root || up === dirname(up)) break;
  }
  report.problems.unshift(...unsafeParts.map((message) => warning(message, null)));
  report.lint = notes.map((p) => warning(p.message, locate(read, p.at, { key: p.key })));
  if (!isUsable(parts)) {
    const drops = problems.flatMap((p) => p.dropped === undefined ? [] : [p.dropped]);
    return skip(REASONS.nothingUsable(drops), nameAt);
  }
  report.plugin = { name, ...parts };
  return report;
}

// The forgiving reading of a manifest's fields once it has a name: everything usable is kept,
// everything else becomes a problem (not yet located in the text).

/** A plugin's contents, everything but its name. */
export type PluginParts = Omit<Plugin, "name">;

/**
 * Reads version, description, hooks, actions and services from the lenient data, the per-hook
 * settings from the typed data, and finds the workflows and routines. Requires `--allow-read`.
 *
 * @param data The manifest's lenient data (a map).
 * @param typed The manifest's typed data (YAML core types), for the `tyhooks:` settings; default
 *   `data`.
 * @returns The parts, the problems, and the notes only `plugins validate` reports.
 */
export function buildPlugin(
  root: PluginRoot,
  data: Record<string, unknown>,
  typed: unknown = data,
): { parts: PluginParts; problems: Problem[]; notes: Problem[] } {
  const problems: Problem[] = [];
  const text = (key: "version" | "description"): string => {
    const value = data[key];
    if (value === undefined || value === null) return "";
    // Shown by plugins list: control characters (NUL, terminal escapes) never reach a terminal.
    if (typeof value === "string") return value.replace(/\p{Cc}/gu, "");
    problems.push(dropped(`"${key}"`, `must be a string, not ${kindOf(value)}`, [key]));
    return "";
  };
  const version = text("version");
  const description = text("description");
  const hooks = buildHooks(root, data.hooks);
  const actions = buildActions(root, data.actions);
  const services = buildServices(root, data.services);
  const names = dirNames(root.dir);
  const workflows = findWorkflows(root.dir, names);
  const routines = findRoutines(root.dir, names);
  // Settings are typed (`persistent: true` is a boolean), unlike ty's string-minded fields.
  const settings = buildHookSettings(
    isRecord(typed) ? typed.tyhooks : undefined,
    isRecord(data.hooks) ? Object.keys(data.hooks) : [],
  );
  problems.push(
    ...hooks.problems,
    ...actions.problems,
    ...services.problems,
    ...settings.problems,
  );
  return {
    parts: {
      version,
      description,
      dir: root.dir,
      hooks: hooks.hooks,
      actions: actions.actions,
      services: services.services,
      workflows,
      routines,
      settings: settings.settings,
    },
    problems,
    notes: [...hooks.notes, ...actions.notes, ...services.notes],
  };
}

/**
 * Does the plugin handle anything at all?
 */
export function isUsable(
  parts: Pick<PluginParts, "hooks" | "actions" | "services" | "workflows" | "routines">,
): boolean {
  return Object.keys(parts.hooks).length + parts.actions.length + parts.services.length +
      parts.workflows.length + parts.routines.length > 0;
}

// The forgiving reading of `hooks`: each event whose script passes the checks is kept, each
// other one is dropped with a problem.

/**
 * Reads the `hooks` map. Requires `--allow-read`.
 *
 * @param raw The lenient value of `hooks` (undefined or null when absent).
 * @returns Event -> absolute script path, the problems, and the notes only `plugins validate`
 *   reports (scripts outside the plugin dir).
 */
export function buildHooks(
  root: PluginRoot,
  raw: unknown,
): { hooks: Record<string, string>; problems: Problem[]; notes: Problem[] } {
  const hooks: Record<string, string> = {};
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (raw === undefined || raw === null) return { hooks, problems, notes };
  if (!isRecord(raw)) {
    const reason = `must be a map of event to script, not ${kindOf(raw)}`;
    return { hooks, problems: [dropped('"hooks"', reason, ["hooks"])], notes };
  }
  // Entries are checked one after another: a plugin's own hooks are few, and the loader already
  // runs many plugins at once.
  for (const [event, script] of Object.entries(raw)) {
    const what = `hook ${quote(event)}`;
    const at = ["hooks", event];
    if (hasControlCharacters(event)) {
      problems.push(
        dropped(`hook ${JSON.stringify(event)}`, "the event name contains control characters", at),
      );
      continue;
    }
    if (!HooksSchema.keyType.safeParse(event).success) {
      problems.push(dropped(what, "the event name is empty", at));
    } else if (!HooksSchema.valueType.safeParse(script).success) {
      const reason = `the script must be a path, not ${kindOf(script)}`;
      problems.push(dropped(what, typeof script === "string" ? "the script is empty" : reason, at));
    } else {
      const check = checkScript(root, script as string);
      if (check.ok) {
        hooks[event] = check.path;
        if (check.unsafe) {
          const { reason, hint } = check.unsafe;
          const message = `Hook ${quote(event)}: script ${quote(script as string)} ${reason}`;
          problems.push({ message: `${message} (hint: ${hint})`, at });
        }
        if (check.outside !== null) {
          const message = outsideDir(
            `Hook ${quote(event)}`,
            "script",
            script as string,
            check.outside,
          );
          notes.push({ message, at });
        }
      } else {problems.push(
          dropped(what, `script ${quote(script as string)} ${check.reason}`, at, check.hint),
        );}
    }
  }
  return { hooks, problems, notes };
}

// The forgiving reading of `actions`: each well-formed action whose script passes the checks is
// kept, each other one is dropped with a problem.

// The same fields as the strict schema, but unknown keys are ignored rather than refused: only
// `plugins validate` reports them.
const LooseAction = z.object(ActionSchema.shape);

/**
 * Reads the `actions` list. Requires `--allow-read`.
 *
 * @param raw The lenient value of `actions` (undefined or null when absent).
 * @returns The kept actions, the problems, and the notes only `plugins validate` reports.
 */
export function buildActions(
  root: PluginRoot,
  raw: unknown,
): { actions: PluginAction[]; problems: Problem[]; notes: Problem[] } {
  const actions: PluginAction[] = [];
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (raw === undefined || raw === null) return { actions, problems, notes };
  if (!Array.isArray(raw)) {
    const reason = `must be a list of actions, not ${kindOf(raw)}`;
    return { actions, problems: [dropped('"actions"', reason, ["actions"])], notes };
  }
  for (const [index, item] of raw.entries()) {
    const at = ["actions", index];
    const id = isRecord(item) && typeof item.id === "string" && item.id !== "" ? item.id : null;
    const what = id === null ? `action #${index + 1}` : `action ${quote(id)}`;
    const parsed = LooseAction.safeParse(withoutNulls(item), { reportInput: true });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push(dropped(what, describeIssue(issue), [...at, ...issue.path]));
      continue;
    }
    const action = parsed.data;
    if (hasControlCharacters(action.id) || hasControlCharacters(action.label ?? "")) {
      problems.push(
        dropped(`action #${index + 1}`, "its id or label contains control characters", at),
      );
      continue;
    }
    if (actions.some((a) => a.id === action.id)) {
      problems.push(dropped(what, "the id is already used by an earlier action", at));
      continue;
    }
    const check = checkScript(root, action.command);
    if (!check.ok) {
      const reason = `script ${quote(action.command)} ${check.reason}`;
      problems.push(dropped(what, reason, [...at, "command"], check.hint));
      continue;
    }
    if (check.unsafe) {
      const { reason, hint } = check.unsafe;
      const message = `Action ${quote(action.id)}: script ${quote(action.command)} ${reason}`;
      problems.push({ message: `${message} (hint: ${hint})`, at: [...at, "command"] });
    }
    if (check.outside !== null) {
      const message = outsideDir(
        `Action ${quote(action.id)}`,
        "script",
        action.command,
        check.outside,
      );
      notes.push({ message, at: [...at, "command"] });
    }
    actions.push({ id: action.id, label: action.label || action.id, command: check.path });
  }
  return { actions, problems, notes };
}

/**
 * A copy of a map without its null values: ty (Go) reads `label:` with nothing after it as an
 * absent field, and so does the forgiving loader.
 */
export function withoutNulls(value: unknown): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

// The forgiving reading of `services`: each well-formed service is kept, each other one is
// dropped whole with a problem. A service is never started with a configuration other than the
// one written, so a bad `restart` value or env KEY drops the service rather than the value; the
// one exception is ty's: an `env` entry without `=` is skipped with a warning and the service
// kept, as ty keeps it.

// The strict schema's fields; unknown keys are left to `plugins validate`.
const LooseService = z.object(ServiceSchema.shape);

/**
 * Reads the `services` list. Requires `--allow-read`.
 *
 * @param raw The lenient value of `services` (undefined or null when absent).
 * @returns The kept services, the problems, and the notes only `plugins validate` reports.
 */
export function buildServices(
  root: PluginRoot,
  raw: unknown,
): { services: PluginService[]; problems: Problem[]; notes: Problem[] } {
  const services: PluginService[] = [];
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  if (raw === undefined || raw === null) return { services, problems, notes };
  if (!Array.isArray(raw)) {
    const reason = `must be a list of services, not ${kindOf(raw)}`;
    return { services, problems: [dropped('"services"', reason, ["services"])], notes };
  }
  for (const [index, item] of raw.entries()) {
    const at = ["services", index];
    const name = isRecord(item) && typeof item.name === "string" && item.name !== ""
      ? item.name
      : null;
    const what = name === null ? `service #${index + 1}` : `service ${quote(name)}`;
    const entry = withoutNulls(item);
    if (isRecord(entry) && Array.isArray(entry.env)) {
      const env = entry.env;
      entry.env = env.filter((value, j) => {
        // ty passes such an entry on and keeps the service; tyhooks keeps the service too.
        if (typeof value !== "string" || ENV_ENTRY.test(value)) return true;
        const key = value.includes("=")
          ? " (KEY: letters, digits and _, not starting with a digit)"
          : "";
        const warning = `Skipped env entry ${quote(value)} of ${what}: it is not KEY=VALUE${key}`;
        problems.push({ message: warning, at: [...at, "env", j] });
        return false;
      });
    }
    const parsed = LooseService.safeParse(entry, { reportInput: true });
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      problems.push(dropped(what, describeIssue(issue), [...at, ...issue.path]));
      continue;
    }
    const service = parsed.data;
    if (hasControlCharacters(service.name)) {
      problems.push(dropped(`service #${index + 1}`, "its name contains control characters", at));
      continue;
    }
    if (services.some((s) => s.name === service.name)) {
      problems.push(dropped(what, "the name is already used by an earlier service", at));
      continue;
    }
    if (service.command.includes("\0")) {
      problems.push(dropped(what, '"command" contains a NUL byte', [...at, "command"]));
      continue;
    }
    const cwd = checkCwd(root, service.cwd ?? "");
    if (!cwd.ok) {
      problems.push(dropped(what, `cwd ${quote(service.cwd ?? "")} ${cwd.reason}`, [...at, "cwd"]));
      continue;
    }
    if (cwd.outside !== null) {
      const message = outsideDir(
        `Service ${quote(service.name)}`,
        "cwd",
        service.cwd ?? "",
        cwd.outside,
      );
      notes.push({ message, at: [...at, "cwd"] });
    }
    services.push({
      name: service.name,
      command: service.command,
      cwd: cwd.path,
      env: service.env ?? [],
      restart: service.restart ?? "on-failure",
    });
  }
  return { services, problems, notes };
}

// What a plugin holds by convention rather than in its manifest: `workflows/*.yaml|*.yml` and
// `routines/<name>/prompt.md`.

const WORKFLOW_EXTENSIONS = [".yaml", ".yml"];

/**
 * Workflow names: the stems of the `.yaml`/`.yml` files in `<dir>/workflows`, sorted, each once.
 * Requires `--allow-read`.
 *
 * @param names The plugin dir's entries, when the caller has listed it (see {@linkcode dirNames}).
 * @returns The names (none when the folder is missing).
 */
export function findWorkflows(dir: string, names?: ReadonlySet<string> | null): string[] {
  const found = new Set<string>();
  for (const entry of listDir(join(dir, "workflows"), names?.has("workflows") ?? true)) {
    const ext = extname(entry.name);
    // Names are listed to users: control characters (escapes, newlines) never are.
    if (!WORKFLOW_EXTENSIONS.includes(ext) || entry.name.startsWith(".")) continue;
    if (hasControlCharacters(entry.name)) continue;
    if (isFile(join(dir, "workflows", entry.name), entry)) {
      found.add(entry.name.slice(0, -ext.length));
    }
  }
  return [...found].sort(byCodeUnit);
}

/**
 * Routine names: the folders of `<dir>/routines` that hold a `prompt.md` file, sorted.
 * Requires `--allow-read`.
 *
 * @param names The plugin dir's entries, when the caller has listed it (see {@linkcode dirNames}).
 * @returns The names (none when the folder is missing).
 */
export function findRoutines(dir: string, names?: ReadonlySet<string> | null): string[] {
  const found: string[] = [];
  for (const entry of listDir(join(dir, "routines"), names?.has("routines") ?? true)) {
    if (entry.name.startsWith(".") || hasControlCharacters(entry.name)) continue;
    observe(join(dir, "routines", entry.name, "prompt.md"));
    if (statIsFile(join(dir, "routines", entry.name, "prompt.md"))) found.push(entry.name);
  }
  return found.sort(byCodeUnit);
}

/**
 * The names in `dir`, or null when it cannot be listed. Most plugins have no `workflows/` and
 * no `routines/`: one listing of the plugin dir says so, where looking for each would fail
 * twice, each failure building an exception (1,000 plugins: tens of ms).
 */
export function dirNames(dir: string): Set<string> | null {
  try {
    return new Set([...Deno.readDirSync(dir)].map((entry) => entry.name));
  } catch {
    return null;
  }
}

function listDir(path: string, mayExist: boolean): Deno.DirEntry[] {
  observe(path);
  if (!mayExist) return [];
  try {
    return [...Deno.readDirSync(path)];
  } catch {
    // Missing, not a folder, or unreadable: the plugin simply has none.
    return [];
  }
}

function isFile(path: string, entry: Deno.DirEntry): boolean {
  if (!entry.isSymlink) return entry.isFile;
  observe(path);
  return statIsFile(path);
}

function statIsFile(path: string): boolean {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
}

// The strict half of `plugins validate`: the whole manifest against the strict zod schema
// (unknown keys, wrong types), plus event names that look like typos of known ones.

const ACTION_KEYS = Object.keys(ActionSchema.shape);
const SERVICE_KEYS = Object.keys(ServiceSchema.shape);

/**
 * Lints one parsed manifest strictly. Returns nothing for a manifest that could not be parsed
 * (the loader already said why).
 *
 * @returns The problems, each with a line and column.
 */
export function strictProblems(report: PluginReport): LoadWarning[] {
  const parsed = report.parsed;
  if (parsed === null) return [];
  const problems: LoadWarning[] = [];
  const add = (message: string, at: readonly PropertyKey[], key = false) => {
    const { line, column } = locate(parsed, at, { key });
    problems.push({ plugin: report.name, path: report.manifest, line, column, message });
  };
  const result = ManifestSchema.safeParse(parsed.typed, { reportInput: true });
  for (const issue of result.error?.issues ?? []) {
    if (issue.code !== "unrecognized_keys") {
      add(describeIssue(issue), issue.path);
      continue;
    }
    const known = issue.path.length === 0
      ? MANIFEST_KEYS
      : issue.path[0] === "actions"
      ? ACTION_KEYS
      : issue.path[0] === "tyhooks"
      ? SETTING_KEYS
      : SERVICE_KEYS;
    for (const key of issue.keys) {
      add(unknownKey(key, pathText(issue.path), closest(key, known)), [...issue.path, key], true);
    }
  }
  if (parsed.extraDocuments !== null) {
    const { count, line, column } = parsed.extraDocuments;
    problems.push({
      plugin: report.name,
      path: report.manifest,
      line,
      column,
      message: `plugin.yaml holds ${count} more YAML ${
        count === 1 ? "document" : "documents"
      } after the first, which ${count === 1 ? "is" : "are"} not read (as in ty)`,
    });
  }
  const typed = parsed.typed;
  if (isRecord(typed) && isRecord(typed.hooks)) {
    for (const event of Object.keys(typed.hooks)) {
      const suggestion = closest(event, KNOWN_EVENTS);
      if (suggestion !== undefined) add(unknownEvent(event, suggestion), ["hooks", event], true);
    }
  }
  return problems;
}
