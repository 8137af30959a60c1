/**
 * Loads one plugin dir, forgivingly: reads the manifest, keeps every usable entry and records a
 * problem (with its line and column) for every one it drops. Whether the plugin as a whole is
 * skipped is decided here too; name clashes between plugins are decided by the caller. Also the
 * strict half of `plugins validate`, which reads the same manifest against the strict schema.
 *
 * A well-formed manifest is read without zod and without the yaml package: zod words what is
 * wrong with an odd entry, and yaml finds where a problem is written, each imported on first
 * need.
 *
 * @module
 */

import {
  describeIssue,
  dropped,
  type Issue,
  outsideDir,
  pathText,
  type Problem,
  REASONS,
  skipped,
  unknownEvent,
  unknownKey,
} from "./messages.ts";
import { checkCwd, checkScript, type PluginRoot } from "./script_path.ts";
import { dirname, extname, join, relative } from "../path.ts";
import type { FoundDir, Observe } from "./load.ts";
import {
  ENV_ENTRY,
  type LoadWarning,
  type Plugin,
  type PluginAction,
  type PluginService,
  RESTART_POLICIES,
} from "./types.ts";
import {
  locate,
  located,
  MAX_MANIFEST_BYTES,
  type ParsedManifest,
  type Position,
  readManifest,
} from "./read_manifest.ts";
import { closest, hasControl, kindOf, quoted, stripControl } from "../text.ts";
import { isRecord } from "../wire/json.ts";
import { unsafeMode } from "../fs.ts";
import { buildHookSettings, SETTING_KEYS } from "./hook_settings.ts";
import type { ManifestAction, ManifestService } from "./manifest_schema.ts";
import { isKnownEvent, KNOWN_EVENTS } from "../events.ts";

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
  /** The plugin, or null when it is skipped. */
  plugin: Plugin | null;
  /** One warning per dropped entry. */
  problems: LoadWarning[];
  /** The one warning of a skipped plugin, else null. */
  skip: LoadWarning | null;
  /** What only `plugins validate` reports (the loader accepts it, as ty does). */
  lint: LoadWarning[];
  /** Each kept hook's and action's script, for the lint to read its first line. */
  scripts: NamedScript[];
  /** The parsed manifest, for the strict lint; null when it could not be parsed. */
  parsed: ParsedManifest | null;
}

type Unsafe = ReturnType<typeof unsafeMode>;

/** A script as a hook or action names it. */
export interface NamedScript {
  /** Its absolute path. */
  path: string;
  /** As the manifest writes it. */
  written: string;
  /** Who names it, for messages: `Hook "task.done"`, `Action "sync"`. */
  what: string;
  /** Where in the manifest's data. */
  at: readonly PropertyKey[];
}

/** Options of {@linkcode inspectPlugin}. */
export interface InspectOptions {
  /** Ends the manifest's read. */
  signal?: AbortSignal;
  observe?: Observe;
  /** StrictModes verdicts on the dirs above plugins, shared by the plugins of one load. */
  above?: Map<string, Unsafe>;
}

/**
 * Loads the plugin in `dir` (absolute, or as discovery found it) below `root`, the plugins dir
 * that messages name it from. Never throws for anything a plugin contains.
 */
export async function inspectPlugin(
  root: string,
  dir: string | FoundDir,
  options: InspectOptions = {},
): Promise<PluginReport> {
  const { observe, above = new Map() } = options;
  const found = typeof dir === "string" ? null : dir;
  const path = found?.path ?? dir as string;
  const manifest = join(path, "plugin.yaml");
  const relDir = (path.startsWith(`${root}/`) ? path.slice(root.length + 1) : "") ||
    relative(root, path) || ".";
  const report: PluginReport = {
    dir: path,
    relDir,
    manifest,
    name: null,
    plugin: null,
    problems: [],
    skip: null,
    lint: [],
    scripts: [],
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
    report.skip = warning(skipped(report.name, relDir, reason), at);
    return report;
  };

  // StrictModes: whoever can write the manifest, the plugin dir or a dir above it (up to the
  // plugins dir, where another plugin could be put in its place) decides what runs. Checked
  // first: when nobody else can, the manifest cannot turn into a FIFO, or grow, before it is read.
  const unsafeParts: string[] = [];
  const check = (what: () => string, unsafe: Unsafe) => {
    if (unsafe !== null) unsafeParts.push(`${what()} ${unsafe.reason} (hint: ${unsafe.hint})`);
  };
  const strictModes = (realDir: string) => {
    check(() => `Plugin dir ${quoted(relDir)}`, verdict(realDir, found?.info));
    const info = found?.manifest.isSymlink === false ? found.manifest : null;
    const manifest = join(realDir, "plugin.yaml");
    check(() => `Manifest ${quoted(join(relDir, "plugin.yaml"))}`, verdict(manifest, info));
    for (let up = dirname(path); up.length >= root.length && up !== path; up = dirname(up)) {
      if (!above.has(up)) above.set(up, verdict(up));
      const what = () => `Dir ${quoted(relative(root, up) || root)} above plugin ${quoted(relDir)}`;
      check(what, above.get(up) ?? null);
      if (up === root || up === dirname(up)) break;
    }
  };
  if (found !== null) strictModes(found.real);
  const knownRegular = found?.linked === false && found.manifest.isFile &&
    found.manifest.size <= MAX_MANIFEST_BYTES && !unsafeParts.length;
  const read = await readManifest(manifest, { signal: options.signal, observe, knownRegular });
  if (!read.ok) return skip(read.message, read.at);
  report.parsed = read;
  const at = async (path: readonly PropertyKey[], key = false) =>
    locate(await located(read), path, { key });
  const data = read.lenient;
  if (data === null || data === undefined) return skip(REASONS.empty, { line: 1, column: 1 });
  if (!isRecord(data)) return skip(REASONS.notAMap, await at([]));
  const name = data.name;
  if (name === undefined || name === null || name === "") {
    return skip(REASONS.noName, await at(["name"]));
  }
  if (typeof name !== "string") return skip(REASONS.nameNotText, await at(["name"]));
  if (hasControl(name)) return skip(REASONS.nameControl, await at(["name"]));
  report.name = name;

  let realDir = found?.real;
  if (realDir === undefined) {
    observe?.(path);
    try {
      realDir = Deno.realPathSync(path);
    } catch (error) {
      return skip(`cannot resolve the plugin dir: ${(error as Error).message}`, null);
    }
    strictModes(realDir);
  }
  const { parts, problems, notes, scripts } = await buildPlugin(
    { dir: path, realDir, observe },
    data,
    read.typed,
  );
  for (const p of problems) report.problems.push(warning(p.message, await at(p.at, p.key)));
  report.problems.unshift(...unsafeParts.map((message) => warning(message, null)));
  for (const p of notes) report.lint.push(warning(p.message, await at(p.at, p.key)));
  report.scripts = scripts;
  if (!isUsable(parts)) {
    const drops = problems.flatMap((p) => p.dropped === undefined ? [] : [p.dropped]);
    return skip(REASONS.nothingUsable(drops), await at(["name"]));
  }
  report.plugin = { name, ...parts };
  return report;
}

function verdict(path: string, info?: Deno.FileInfo | null): Unsafe {
  try {
    return unsafeMode(info ?? Deno.statSync(path), path);
  } catch {
    return null; // Gone since it was resolved: nothing left to warn about.
  }
}

/** Where a loaded plugin's name is written (parsing its manifest with positions). */
export async function nameAt(report: PluginReport): Promise<Position | null> {
  return report.parsed === null ? null : locate(await located(report.parsed), ["name"]);
}

// The forgiving reading of a manifest's fields once it has a name: everything usable is kept,
// everything else becomes a problem (not yet located in the text).

type PluginParts = Omit<Plugin, "name">;

// Each part from the lenient data, the settings from the typed data; notes are what only
// `plugins validate` reports.
async function buildPlugin(
  root: PluginRoot,
  data: Record<string, unknown>,
  typed: unknown,
): Promise<{ parts: PluginParts; problems: Problem[]; notes: Problem[]; scripts: NamedScript[] }> {
  const problems: Problem[] = [];
  const text = (key: "version" | "description"): string => {
    const value = data[key];
    if (value === undefined || value === null) return "";
    // Shown by plugins list: control characters (NUL, terminal escapes) never reach a terminal.
    if (typeof value === "string") return stripControl(value);
    problems.push(dropped(`"${key}"`, `must be a string, not ${kindOf(value)}`, [key]));
    return "";
  };
  const version = text("version");
  const description = text("description");
  const hooks = buildHooks(root, data.hooks);
  // An event written beside `hooks:` rather than under it (an indentation slip) is no hook of
  // the plugin: said so where ty would be silent, and a lost guard then fails closed.
  for (const key of Object.keys(data)) {
    if (!isKnownEvent(key)) continue;
    const hint = 'indent it under "hooks:"';
    problems.push({
      ...dropped(`hook ${quoted(key)}`, 'it is outside "hooks:"', [key], hint),
      key: true,
    });
  }
  const actions = await buildActions(root, data.actions);
  const services = await buildServices(root, data.services);
  const has = conventionDirs(root.dir);
  const workflows = findWorkflows(root, has.workflows);
  const routines = findRoutines(root, has.routines);
  // Settings are typed (`persistent: true` is a boolean), unlike ty's string-minded fields.
  const settings = await buildHookSettings(
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
    scripts: [...hooks.scripts, ...actions.scripts],
  };
}

function isUsable(parts: PluginParts): boolean {
  return Object.keys(parts.hooks).length + parts.actions.length + parts.services.length +
      parts.workflows.length + parts.routines.length > 0;
}

// The forgiving reading of `hooks`: each event whose script passes the checks is kept, each
// other one is dropped with a problem.
function buildHooks(
  root: PluginRoot,
  raw: unknown,
): {
  hooks: Record<string, string>;
  problems: Problem[];
  notes: Problem[];
  scripts: NamedScript[];
} {
  const hooks: Record<string, string> = {};
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  const scripts: NamedScript[] = [];
  if (raw === undefined || raw === null) return { hooks, problems, notes, scripts };
  if (!isRecord(raw)) {
    const reason = `must be a map of event to script, not ${kindOf(raw)}`;
    return { hooks, problems: [dropped('"hooks"', reason, ["hooks"])], notes, scripts };
  }
  for (const [event, script] of Object.entries(raw)) {
    const what = `hook ${quoted(event)}`;
    const at = ["hooks", event];
    if (hasControl(event)) {
      problems.push(
        dropped(`hook ${quoted(event)}`, "the event name contains control characters", at),
      );
      continue;
    }
    // HooksSchema's key and value: each a non-empty string.
    if (event === "") {
      problems.push(dropped(what, "the event name is empty", at));
    } else if (!isText(script)) {
      const reason = `the script must be a path, not ${kindOf(script)}`;
      problems.push(dropped(what, typeof script === "string" ? "the script is empty" : reason, at));
    } else {
      const check = checkScript(root, script);
      if (check.ok) {
        hooks[event] = check.path;
        scripts.push({ path: check.path, written: script, what: `Hook ${quoted(event)}`, at });
        if (check.unsafe) {
          const { reason, hint } = check.unsafe;
          const message = `Hook ${quoted(event)}: script ${quoted(script)} ${reason}`;
          problems.push({ message: `${message} (hint: ${hint})`, at });
        }
        if (check.outside !== null) {
          const message = outsideDir(`Hook ${quoted(event)}`, "script", script, check.outside);
          notes.push({ message, at });
        }
      } else {
        problems.push(dropped(what, `script ${quoted(script)} ${check.reason}`, at, check.hint));
      }
    }
  }
  return { hooks, problems, notes, scripts };
}

function isText(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

// The forgiving reading of `actions`: each well-formed action whose script passes the checks is
// kept, each other one is dropped with a problem. Two actions with one id are both kept, as in
// ty (running the id runs the first); only the lint reports it. An entry that is not plainly
// well formed is parsed with zod (the schema's fields, unknown keys ignored: only `plugins
// validate` reports them), which words what is wrong.
async function buildActions(
  root: PluginRoot,
  raw: unknown,
): Promise<
  { actions: PluginAction[]; problems: Problem[]; notes: Problem[]; scripts: NamedScript[] }
> {
  const actions: PluginAction[] = [];
  const problems: Problem[] = [];
  const notes: Problem[] = [];
  const scripts: NamedScript[] = [];
  if (raw === undefined || raw === null) return { actions, problems, notes, scripts };
  if (!Array.isArray(raw)) {
    const reason = `must be a list of actions, not ${kindOf(raw)}`;
    return { actions, problems: [dropped('"actions"', reason, ["actions"])], notes, scripts };
  }
  for (const [index, item] of raw.entries()) {
    const at = ["actions", index];
    const id = isRecord(item) && isText(item.id) ? item.id : null;
    const what = id === null ? `action #${index + 1}` : `action ${quoted(id)}`;
    let action: ManifestAction;
    if (
      isRecord(item) && isText(item.id) && isText(item.command) &&
      (item.label === undefined || item.label === null || typeof item.label === "string")
    ) {
      action = { id: item.id, label: item.label ?? undefined, command: item.command };
    } else {
      const { LooseActionSchema } = await import("./manifest_schema.ts");
      const parsed = LooseActionSchema.safeParse(withoutNulls(item), { reportInput: true });
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        problems.push(dropped(what, describeIssue(issue), [...at, ...issue.path]));
        continue;
      }
      action = parsed.data;
    }
    if (hasControl(action.id) || hasControl(action.label ?? "")) {
      problems.push(
        dropped(`action #${index + 1}`, "its id or label contains control characters", at),
      );
      continue;
    }
    const check = checkScript(root, action.command);
    if (!check.ok) {
      const reason = `script ${quoted(action.command)} ${check.reason}`;
      problems.push(dropped(what, reason, [...at, "command"], check.hint));
      continue;
    }
    if (check.unsafe) {
      const { reason, hint } = check.unsafe;
      const message = `Action ${quoted(action.id)}: script ${quoted(action.command)} ${reason}`;
      problems.push({ message: `${message} (hint: ${hint})`, at: [...at, "command"] });
    }
    if (check.outside !== null) {
      const message = outsideDir(
        `Action ${quoted(action.id)}`,
        "script",
        action.command,
        check.outside,
      );
      notes.push({ message, at: [...at, "command"] });
    }
    if (actions.some((a) => a.id === action.id)) {
      const message = `Action id ${quoted(action.id)} is also used by an earlier action: both ` +
        "are listed, as in ty, and running it runs the first (hint: give each its own id)";
      notes.push({ message, at: [...at, "id"] });
    }
    actions.push({ id: action.id, label: action.label || action.id, command: check.path });
    const named = `Action ${quoted(action.id)}`;
    scripts.push({
      path: check.path,
      written: action.command,
      what: named,
      at: [...at, "command"],
    });
  }
  return { actions, problems, notes, scripts };
}

// ty (Go) reads `label:` with nothing after it as an absent field, and so does the loader.
function withoutNulls(value: unknown): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

// A service entry as the loader keeps it, or the first thing wrong with it. A plainly
// well-formed entry is taken without zod, whose import alone costs about three cold loads of ten
// plugins with services (median 257 against 81 ms); any other is read by the manifest's schema
// (unknown keys ignored: the lint reports them), which words what is wrong.
async function readService(
  entry: unknown,
): Promise<{ service: ManifestService } | { issue: Issue }> {
  if (isRecord(entry)) {
    const { name, command, cwd, env, restart } = entry;
    const policy = RESTART_POLICIES.find((p) => p === restart);
    if (
      isText(name) && isText(command) && (cwd === undefined || typeof cwd === "string") &&
      (env === undefined || Array.isArray(env) && env.every((e) => typeof e === "string")) &&
      (restart === undefined || policy !== undefined)
    ) {
      return { service: { name, command, cwd, env, restart: policy } };
    }
  }
  const { LooseServiceSchema } = await import("./manifest_schema.ts");
  const parsed = LooseServiceSchema.safeParse(entry, { reportInput: true });
  return parsed.success ? { service: parsed.data } : { issue: parsed.error.issues[0] };
}

// The forgiving reading of `services`: each well-formed service is kept, each other one is
// dropped whole with a problem. A service is never started with a configuration other than the
// one written, so a bad `restart` value or env KEY drops the service rather than the value; the
// one exception is ty's: an `env` entry without `=` is skipped with a warning and the service
// kept, as ty keeps it.
async function buildServices(
  root: PluginRoot,
  raw: unknown,
): Promise<{ services: PluginService[]; problems: Problem[]; notes: Problem[] }> {
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
    const name = isRecord(item) && isText(item.name) ? item.name : null;
    const what = name === null ? `service #${index + 1}` : `service ${quoted(name)}`;
    const entry = withoutNulls(item);
    if (isRecord(entry) && Array.isArray(entry.env)) {
      const env = entry.env;
      entry.env = env.filter((value, j) => {
        // ty passes such an entry on and keeps the service; tyhooks keeps the service too.
        if (typeof value !== "string" || ENV_ENTRY.test(value)) return true;
        const key = value.includes("=")
          ? " (KEY: letters, digits and _, not starting with a digit)"
          : "";
        const warning = `Skipped env entry ${quoted(value)} of ${what}: it is not KEY=VALUE${key}`;
        problems.push({ message: warning, at: [...at, "env", j] });
        return false;
      });
    }
    const read = await readService(entry);
    if ("issue" in read) {
      problems.push(dropped(what, describeIssue(read.issue), [...at, ...read.issue.path]));
      continue;
    }
    const { service } = read;
    if (hasControl(service.name)) {
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
      problems.push(
        dropped(what, `cwd ${quoted(service.cwd ?? "")} ${cwd.reason}`, [...at, "cwd"]),
      );
      continue;
    }
    if (cwd.outside !== null) {
      const message = outsideDir(
        `Service ${quoted(service.name)}`,
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

// The stems of the `.yaml`/`.yml` files in `workflows/`, sorted, each once.
function findWorkflows(root: PluginRoot, mayExist: boolean): string[] {
  const { dir, observe } = root;
  const found = new Set<string>();
  for (const entry of listDir(root, "workflows", mayExist)) {
    const ext = extname(entry.name);
    // Names are listed to users: control characters (escapes, newlines) never are.
    if (!WORKFLOW_EXTENSIONS.includes(ext) || entry.name.startsWith(".")) continue;
    if (hasControl(entry.name)) continue;
    const path = join(dir, "workflows", entry.name);
    if (entry.isSymlink) observe?.(path);
    if (entry.isSymlink ? statIsFile(path) : entry.isFile) {
      found.add(entry.name.slice(0, -ext.length));
    }
  }
  return [...found].sort();
}

// The folders of `routines/` that hold a `prompt.md` file, sorted.
function findRoutines(root: PluginRoot, mayExist: boolean): string[] {
  const { dir, observe } = root;
  const found: string[] = [];
  for (const entry of listDir(root, "routines", mayExist)) {
    if (entry.name.startsWith(".") || hasControl(entry.name)) continue;
    const prompt = join(dir, "routines", entry.name, "prompt.md");
    observe?.(prompt);
    if (statIsFile(prompt)) found.push(entry.name);
  }
  return found.sort();
}

// Which of `workflows` and `routines` may be in `dir` (both when it cannot be listed). Most
// plugins have neither: one listing says so, where looking for each would build two exceptions.
function conventionDirs(dir: string): { workflows: boolean; routines: boolean } {
  const has = { workflows: false, routines: false };
  try {
    for (const { name } of Deno.readDirSync(dir)) {
      if (name === "workflows" || name === "routines") has[name] = true;
    }
  } catch {
    return { workflows: true, routines: true };
  }
  return has;
}

function listDir(root: PluginRoot, name: string, mayExist: boolean): Deno.DirEntry[] {
  root.observe?.(join(root.dir, name));
  if (!mayExist) return [];
  try {
    return [...Deno.readDirSync(join(root.dir, name))];
  } catch {
    // Missing, not a folder, or unreadable: the plugin simply has none.
    return [];
  }
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

/**
 * Lints one parsed manifest strictly, each problem with a line and column; nothing for a
 * manifest that could not be parsed (the loader already said why).
 */
export async function strictProblems(report: PluginReport): Promise<LoadWarning[]> {
  const parsed = report.parsed;
  if (parsed === null) return [];
  const { ActionSchema, MANIFEST_KEYS, ManifestSchema, ServiceSchema } = await import(
    "./manifest_schema.ts"
  );
  const positions = await located(parsed);
  const problems: LoadWarning[] = [];
  const add = (message: string, at: readonly PropertyKey[], key = false) => {
    const { line, column } = locate(positions, at, { key });
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
      ? Object.keys(ActionSchema.shape)
      : issue.path[0] === "tyhooks"
      ? SETTING_KEYS
      : Object.keys(ServiceSchema.shape);
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
  // Loaded, as ty loads them, but they cannot start (ty's exec fails the same way).
  const { execFormatProblem } = await import("../process/group.ts");
  for (const { path, written, what, at } of report.scripts) {
    const problem = await execFormatProblem(path);
    const script = `${what}: script ${quoted(written)}`;
    if (problem === "no-shebang") {
      add(
        `${script} does not start with a "#!" line naming an interpreter, so it cannot be ` +
          `started (exec format error, as under ty) (hint: make its first line "#!/bin/sh", or ` +
          "the interpreter it is written for)",
        at,
      );
    } else if (problem === "crlf") {
      add(
        `${script} has a "#!" line ending in a carriage return (CRLF line ends), so it cannot ` +
          `be started (hint: dos2unix ${quoted(path)}, or sed -i 's/\\r$//' ${quoted(path)})`,
        at,
      );
    }
  }
  return problems;
}
