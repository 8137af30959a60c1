/**
 * The forgiving reading of a manifest's fields once it has a name: everything usable is kept,
 * everything else becomes a problem (not yet located in the text). Also what a plugin holds by
 * convention rather than in its manifest: `workflows/*.yaml|*.yml` and `routines/<name>/prompt.md`.
 *
 * @module
 */

import { describeIssue, dropped, type Issue, outsideDir, type Problem } from "./messages.ts";
import { isKnownEvent } from "../events.ts";
import { checkCwd, checkScript, type PluginRoot } from "./script_path.ts";
import { extname, join } from "../paths.ts";
import { isFile } from "../fs.ts";
import {
  ENV_ENTRY,
  ENV_KEY,
  type Plugin,
  type PluginAction,
  type PluginService,
  RESTART_POLICIES,
} from "./types.ts";
import { hasControl, kindOf, quoted, stripControl } from "../text.ts";
import { isRecord } from "../wire/json.ts";
import { buildHookSettings } from "./hook_settings.ts";
import type { ManifestAction, ManifestService } from "./manifest_schema.ts";

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

/** A plugin but its name. */
export type PluginParts = Omit<Plugin, "name">;

/** What reading the entries finds beside the entries it keeps. */
export interface Findings {
  /** Dropped entries, and kept ones another user could change. */
  problems: Problem[];
  /** What only `plugins validate` reports. */
  notes: Problem[];
  /** Each kept hook's and action's script. */
  scripts: NamedScript[];
}

// Where the entries are read from, and where what is found goes.
interface Reading {
  root: PluginRoot;
  found: Findings;
}

/** Each part from the lenient data, the settings from the typed data. */
export async function buildPlugin(
  root: PluginRoot,
  { data, typed }: { data: Record<string, unknown>; typed: unknown },
): Promise<Findings & { parts: PluginParts }> {
  const found: Findings = { problems: [], notes: [], scripts: [] };
  const text = (key: "version" | "description"): string => {
    const value = data[key];
    if (value === undefined || value === null) return "";
    // Shown by plugins list: control characters (NUL, terminal escapes) never reach a terminal.
    if (typeof value === "string") return stripControl(value);
    found.problems.push(dropped(`"${key}"`, `must be a string, not ${kindOf(value)}`, [key]));
    return "";
  };
  const version = text("version");
  const description = text("description");
  const hooks = buildHooks(data.hooks, { root, found });
  // An event written beside `hooks:` rather than under it (an indentation slip) is no hook of
  // the plugin: said so where ty would be silent, and a lost guard then fails closed.
  for (const key of Object.keys(data)) {
    if (!isKnownEvent(key)) continue;
    const hint = 'indent it under "hooks:"';
    found.problems.push({
      ...dropped(`hook ${quoted(key)}`, 'it is outside "hooks:"', [key], hint),
      key: true,
    });
  }
  const actions = await buildActions(data.actions, { root, found });
  const services = await buildServices(data.services, { root, found });
  const has = conventionDirs(root.dir);
  const workflows = findWorkflows(root, has.workflows);
  const routines = findRoutines(root, has.routines);
  // Settings are typed (`persistent: true` is a boolean), unlike ty's string-minded fields.
  const settings = await buildHookSettings(
    isRecord(typed) ? typed.tyhooks : undefined,
    isRecord(data.hooks) ? Object.keys(data.hooks) : [],
  );
  found.problems.push(...settings.problems);
  const parts = { version, description, dir: root.dir, hooks, actions, services, workflows };
  return { parts: { ...parts, routines, settings: settings.settings }, ...found };
}

/** Does the plugin hold anything to run or list? */
export function isUsable(parts: PluginParts): boolean {
  return Object.keys(parts.hooks).length + parts.actions.length + parts.services.length +
      parts.workflows.length + parts.routines.length > 0;
}

function buildHooks(raw: unknown, { root, found }: Reading): Record<string, string> {
  const hooks: Record<string, string> = {};
  if (raw === undefined || raw === null) return hooks;
  if (!isRecord(raw)) {
    const reason = `must be a map of event to script, not ${kindOf(raw)}`;
    found.problems.push(dropped('"hooks"', reason, ["hooks"]));
    return hooks;
  }
  for (const [event, script] of Object.entries(raw)) {
    const what = `hook ${quoted(event)}`;
    const at = ["hooks", event];
    if (hasControl(event)) {
      found.problems.push(dropped(what, "the event name contains control characters", at));
    } else if (event === "") {
      // HooksSchema's key and value: each a non-empty string.
      found.problems.push(dropped(what, "the event name is empty", at));
    } else if (!isText(script)) {
      const reason = `the script must be a path, not ${kindOf(script)}`;
      const why = typeof script === "string" ? "the script is empty" : reason;
      found.problems.push(dropped(what, why, at));
    } else {
      const named = { written: script, what: `Hook ${quoted(event)}`, at };
      const path = keepScript(named, { root, found, drop: what });
      if (path !== null) hooks[event] = path;
    }
  }
  return hooks;
}

// The script a hook or action names, checked: its path when it is kept (with a problem when
// another user could change it, a note when it lies outside the plugin dir), else null and the
// entry (`drop`) is dropped with a problem.
function keepScript(
  { written, what, at }: Omit<NamedScript, "path">,
  { root, found, drop }: Reading & { drop: string },
): string | null {
  const check = checkScript(root, written);
  if (!check.ok) {
    found.problems.push(dropped(drop, `script ${quoted(written)} ${check.reason}`, at, check.hint));
    return null;
  }
  if (check.unsafe) {
    const { reason, hint } = check.unsafe;
    const message = `${what}: script ${quoted(written)} ${reason} (hint: ${hint})`;
    found.problems.push({ message, at });
  }
  if (check.outside !== null) {
    found.notes.push({ message: outsideDir(what, "script", written, check.outside), at });
  }
  found.scripts.push({ path: check.path, written, what, at });
  return check.path;
}

function isText(value: unknown): value is string {
  return typeof value === "string" && value !== "";
}

// Two actions with one id are both kept, as in ty (running the id runs the first); only the lint
// reports it. An entry not plainly well formed goes to zod, which words what is wrong.
async function buildActions(raw: unknown, { root, found }: Reading): Promise<PluginAction[]> {
  const actions: PluginAction[] = [];
  for (const entry of listEntries(raw, { list: "actions", problems: found.problems })) {
    const action = await parseAction(entry, found.problems);
    if (action === null) continue;
    const { at, what } = entry;
    const named = { written: action.command, what: `Action ${quoted(action.id)}` };
    const command = keepScript({ ...named, at: [...at, "command"] }, { root, found, drop: what });
    if (command === null) continue;
    if (actions.some((a) => a.id === action.id)) {
      const message = `Action id ${quoted(action.id)} is also used by an earlier action: both ` +
        "are listed, as in ty, and running it runs the first (hint: give each its own id)";
      found.notes.push({ message, at: [...at, "id"] });
    }
    actions.push({ id: action.id, label: action.label || action.id, command });
  }
  return actions;
}

/** One entry of `actions` or `services`, and where it is. */
interface Entry {
  item: unknown;
  index: number;
  at: PropertyKey[];
  /** For messages: `action "sync"`, `service #2`. */
  what: string;
}

// The entries of `actions` or `services`, named by their id or name when they have one; a value
// that is not a list is dropped with a problem.
function listEntries(
  raw: unknown,
  { list, problems }: { list: "actions" | "services"; problems: Problem[] },
): Entry[] {
  if (raw === undefined || raw === null) return [];
  if (!Array.isArray(raw)) {
    problems.push(dropped(`"${list}"`, `must be a list of ${list}, not ${kindOf(raw)}`, [list]));
    return [];
  }
  const [noun, key] = list === "actions" ? ["action", "id"] : ["service", "name"];
  return raw.map((item, index) => {
    const named = isRecord(item) && isText(item[key]) ? item[key] : null;
    const what = named === null ? `${noun} #${index + 1}` : `${noun} ${quoted(named)}`;
    return { item, index, at: [list, index], what };
  });
}

// An action's fields, or null when it is dropped.
async function parseAction(
  { item, index, at, what }: Entry,
  problems: Problem[],
): Promise<ManifestAction | null> {
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
      return null;
    }
    action = parsed.data;
  }
  if (hasControl(action.id) || hasControl(action.label ?? "")) {
    const reason = "its id or label contains control characters";
    problems.push(dropped(`action #${index + 1}`, reason, at));
    return null;
  }
  return action;
}

// ty (Go) reads `label:` with nothing after it as an absent field, and so does the loader.
function withoutNulls(value: unknown): unknown {
  if (!isRecord(value)) return value;
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== null));
}

// A service never starts with another configuration than the one written, so a bad value drops
// the whole service; but an `env` entry without `=` is skipped and the service kept, as in ty.
async function buildServices(raw: unknown, { root, found }: Reading): Promise<PluginService[]> {
  const services: PluginService[] = [];
  const { problems, notes } = found;
  for (const entry of listEntries(raw, { list: "services", problems })) {
    const { index, at, what } = entry;
    const service = await parseService(entry, problems);
    if (service === null) continue;
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
    const written = service.cwd ?? "";
    const cwd = checkCwd(root, written);
    if (!cwd.ok) {
      problems.push(dropped(what, `cwd ${quoted(written)} ${cwd.reason}`, [...at, "cwd"]));
      continue;
    }
    if (cwd.outside !== null) {
      const message = outsideDir(`Service ${quoted(service.name)}`, "cwd", written, cwd.outside);
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
  return services;
}

// A service's fields, or null when it is dropped. An `env` entry that is not KEY=VALUE is
// skipped with a problem.
async function parseService(
  { item, at, what }: Entry,
  problems: Problem[],
): Promise<ManifestService | null> {
  const entry = withoutNulls(item);
  if (isRecord(entry) && Array.isArray(entry.env)) {
    const env = entry.env;
    entry.env = env.filter((value, j) => {
      // ty passes such an entry on and keeps the service; tyhooks keeps the service too.
      if (typeof value !== "string" || ENV_ENTRY.test(value)) return true;
      const why = value.includes("=") && ENV_KEY.test(value.slice(0, value.indexOf("=")))
        ? "its value holds a NUL byte, which no environment can"
        : `it is not KEY=VALUE${
          value.includes("=") ? " (KEY: letters, digits and _, not starting with a digit)" : ""
        }`;
      const warning = `Skipped env entry ${quoted(value)} of ${what}: ${why}`;
      problems.push({ message: warning, at: [...at, "env", j] });
      return false;
    });
  }
  const read = await readService(entry);
  if ("issue" in read) {
    problems.push(dropped(what, describeIssue(read.issue), [...at, ...read.issue.path]));
    return null;
  }
  return read.service;
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

const WORKFLOW_EXTENSIONS = [".yaml", ".yml"];

// The stems of the `.yaml`/`.yml` files in `workflows/`, sorted, each once.
function findWorkflows(root: PluginRoot, mayExist: boolean): string[] {
  const { dir, observe } = root;
  const found = new Set<string>();
  for (const entry of listDir(root, { name: "workflows", mayExist })) {
    const ext = extname(entry.name);
    // Names are listed to users: control characters (escapes, newlines) never are.
    if (!WORKFLOW_EXTENSIONS.includes(ext) || entry.name.startsWith(".")) continue;
    if (hasControl(entry.name)) continue;
    const path = join(dir, "workflows", entry.name);
    if (entry.isSymlink) observe?.(path);
    if (entry.isSymlink ? isFile(path) : entry.isFile) {
      found.add(entry.name.slice(0, -ext.length));
    }
  }
  return [...found].sort();
}

// The folders of `routines/` that hold a `prompt.md` file, sorted.
function findRoutines(root: PluginRoot, mayExist: boolean): string[] {
  const { dir, observe } = root;
  const found: string[] = [];
  for (const entry of listDir(root, { name: "routines", mayExist })) {
    if (entry.name.startsWith(".") || hasControl(entry.name)) continue;
    const prompt = join(dir, "routines", entry.name, "prompt.md");
    observe?.(prompt);
    if (isFile(prompt)) found.push(entry.name);
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

function listDir(
  root: PluginRoot,
  { name, mayExist }: { name: string; mayExist: boolean },
): Deno.DirEntry[] {
  root.observe?.(join(root.dir, name));
  if (!mayExist) return [];
  try {
    return [...Deno.readDirSync(join(root.dir, name))];
  } catch {
    // Missing, not a folder, or unreadable: the plugin simply has none.
    return [];
  }
}
