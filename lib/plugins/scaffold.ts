/**
 * `plugins new` as a library call: a plugin folder that validates and runs as written, for an
 * author to fill in. The manifest carries the schema modeline (its schema next to it), each hook
 * and action gets an executable stub that follows its protocol, and a README says how to try it.
 *
 * @module
 */

import { join } from "../paths.ts";
import { InputError, RunError } from "../errors.ts";
import { closest, hasControl, quoted } from "../text.ts";
import {
  KNOWN_EVENTS,
  POST_TOOL_CALL,
  PRE_TOOL_CALL,
  TASK_DONE,
  TASK_HOSTS,
  TASK_PLACEMENT,
  TASK_ROUTE,
} from "../events.ts";

/** What to scaffold. */
export interface ScaffoldOptions {
  /** Events to hook; default `task.done` alone when no action is asked for either. */
  hooks?: string[];
  /** Action ids. */
  actions?: string[];
}

/** The modeline that points YAML editors at the schema written next to the manifest. */
export const SCHEMA_MODELINE = "# yaml-language-server: $schema=./plugin.schema.json";

const WORD = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/**
 * Creates `<parent>/<name>/`, never over an existing folder. An `InputError` for a name that
 * cannot be a file name, or an event one or two edits from a known one (`task.doen`), as
 * `plugins validate` refuses it. Requires `--allow-read` and `--allow-write`.
 */
export async function scaffoldPlugin(
  parent: string,
  name: string,
  options: ScaffoldOptions = {},
): Promise<{ dir: string; files: string[]; hooks: string[] }> {
  if (!isSafeDirName(name) || !WORD.test(name)) {
    throw new InputError(
      `Invalid plugin name ${quoted(name)}: expected letters, digits, ".", "-" and "_"`,
      { input: "name", hint: "hint: e.g. tyhooks plugins new my-notifier" },
    );
  }
  const actions = unique(options.actions ?? []);
  const hooks = unique(options.hooks ?? (actions.length === 0 ? [TASK_DONE] : []));
  // `--hooks ""` (an unset variable) would scaffold a plugin with nothing to run: never valid.
  if (hooks.length === 0 && actions.length === 0) {
    throw new InputError(`Plugin ${quoted(name)} would have no hook and no action`, {
      input: "--hooks",
      hint: "hint: --hooks task.done, or --actions sync",
    });
  }
  for (const [flag, words] of [["--hooks", hooks], ["--actions", actions]] as const) {
    const bad = words.find((w) => !WORD.test(w));
    if (bad !== undefined) {
      throw new InputError(
        `Invalid value ${quoted(bad)} for flag "${flag}": expected a comma-separated ` +
          'list of names (letters, digits, ".", "-", "_")',
        { input: flag },
      );
    }
  }
  // The rule `plugins validate` applies: a near miss of a known event is a typo, any other name
  // is an event of its own (`fire` sends any name).
  for (const event of hooks) {
    const suggestion = closest(event, KNOWN_EVENTS);
    if (suggestion !== undefined) {
      throw new InputError(`Unknown event ${quoted(event)} for flag "--hooks"`, {
        input: "--hooks",
        hint: `hint: did you mean ${quoted(suggestion)}?`,
      });
    }
  }
  const dir = join(parent, name);
  try {
    await Deno.mkdir(parent, { recursive: true });
  } catch (error) {
    throw new RunError(
      `Cannot create plugin ${quoted(name)} in ${quoted(parent)}: ${(error as Error).message}`,
      { hint: "hint: --dir (or --plugins-dir) names the folder to create it in" },
    );
  }
  try {
    await Deno.mkdir(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.AlreadyExists)) throw error;
    throw new RunError(`Cannot create plugin ${quoted(name)}: ${quoted(dir)} exists`, {
      hint: "hint: pick another name or --dir",
    });
  }
  // zod, for the schema, is imported only when a plugin is scaffolded.
  const { manifestJsonSchema } = await import("./manifest_schema.ts");
  const files: Record<string, string> = {
    "plugin.yaml": manifest(name, hooks, actions),
    "plugin.schema.json": JSON.stringify(await manifestJsonSchema(), null, 2) + "\n",
    "README.md": readme(name, hooks, actions),
  };
  for (const event of hooks) files[`hooks/${event}.sh`] = hookStub(event);
  for (const id of actions) files[`actions/${id}.sh`] = actionStub(id);
  for (const [path, text] of Object.entries(files)) {
    const full = join(dir, path);
    await Deno.mkdir(join(full, ".."), { recursive: true });
    const mode = path.endsWith(".sh") ? 0o755 : 0o644;
    await Deno.writeTextFile(full, text, { createNew: true, mode });
    // mode is filtered by the umask; a stub must be executable whatever it is.
    if (mode === 0o755) await Deno.chmod(full, mode);
  }
  return { dir, files: Object.keys(files), hooks };
}

function unique(words: string[]): string[] {
  return [...new Set(words.map((w) => w.trim()).filter((w) => w !== ""))];
}

function manifest(name: string, hooks: string[], actions: string[]): string {
  const lines = [
    SCHEMA_MODELINE,
    `name: ${name}`,
    "version: 0.1.0",
    `description: What ${name} does, in one line`,
  ];
  if (hooks.length > 0) {
    lines.push("hooks:", ...hooks.map((e) => `  ${JSON.stringify(e)}: hooks/${e}.sh`));
  }
  if (actions.length > 0) {
    const entry = (
      id: string,
    ) => [`  - id: ${JSON.stringify(id)}`, `    command: actions/${id}.sh`];
    lines.push("actions:", ...actions.flatMap(entry));
  }
  return lines.join("\n") + "\n";
}

function readme(name: string, hooks: string[], actions: string[]): string {
  const tries = [
    `tyhooks plugins validate .`,
    ...hooks.slice(0, 1).map((e) =>
      `tyhooks fire ${e} --plugin ${name} --show-output --task-json '{"id":1,"title":"Try"}'`
    ),
    ...actions.slice(0, 1).map((id) => `tyhooks plugins run ${name} ${id}`),
  ];
  const shown = tries.map((t) => `\`${t}\``).join(", ");
  return `# ${name}\n\nA ty / tyhooks plugin. Try it: ${shown}.\n`;
}

// What each hook stub does after its first two lines; any other event gets the task stub.
const STUB_BODIES: Record<string, string[]> = {
  [TASK_ROUTE]: [
    "# Answer KEY=VALUE lines on stdout: CLAUDE_CONFIG_DIR=~/.claude-work, HOLD=1, REASON=...",
    "# Printing nothing leaves the decision to the next router.",
    "exit 0",
  ],
  [TASK_PLACEMENT]: [
    '# The request is one JSON line on stdin: {"event","task":{...}}. Answer',
    '# {"target","workdir","reason"}; printing nothing runs the task locally.',
    "read -r request",
    "exit 0",
  ],
  [TASK_HOSTS]: [
    '# The request is one JSON line on stdin. Answer {"hosts":[{"name","target","workdir","detail"}]}.',
    "read -r request",
    "printf '%s\\n' '{\"hosts\":[]}'",
  ],
  [PRE_TOOL_CALL]: [
    '# One request per line on stdin: {"id","hook","tool","args","platform","user_id"}. One',
    '# answer per line, echoing the id: {"id","action":"allow"} or {"id","action":"block",',
    '# "reason":"..."}. A read-loop serves the daemon\'s persistent mode and one-shot calls alike.',
    "while IFS= read -r request; do",
    "  id=${request#*'\"id\":\"'}; id=${id%%'\"'*}",
    '  printf \'{"id":"%s","action":"allow","reason":""}\\n\' "$id"',
    "done",
  ],
  [POST_TOOL_CALL]: [
    "# Each finished tool call arrives as one JSON line on stdin; nothing is answered.",
    "while IFS= read -r request; do :; done",
  ],
};

const TASK_STUB = [
  "# Gets TASK_ID, TASK_TITLE, TASK_STATUS, TASK_PROJECT, TASK_EVENT, TASK_MESSAGE and",
  '# WORKTREE_PATH, and the event as one JSON line on stdin: {"event","task","message"}.',
  'echo "$TASK_EVENT: task ${TASK_ID:-?} ${TASK_TITLE:-}"',
];

function hookStub(event: string): string {
  const body = Object.hasOwn(STUB_BODIES, event) ? STUB_BODIES[event] : TASK_STUB;
  return ["#!/bin/sh", `# ${event} hook. Runs from the plugin dir.`, ...body, ""].join("\n");
}

function actionStub(id: string): string {
  return [
    "#!/bin/sh",
    `# Action ${id}: tyhooks plugins run <plugin> ${id} [--task-json '{"id":1}']`,
    "# Gets TASK_PLUGIN_NAME and TASK_PLUGIN_DIR, and the TASK_* variables when a task is given.",
    `echo "${id}: task \${TASK_ID:-none}"`,
    "",
  ].join("\n");
}

// Plugin folder names: `plugins add` installs into `<plugins-dir>/<name>`, so a name must be one
// safe path segment.

/**
 * Can `name` be a plugin's folder name? One path segment, not `.`/`..`, not hidden (discovery
 * skips dot-folders), no control characters, at most 255 bytes.
 */
export function isSafeDirName(name: string): boolean {
  return name !== "" && !name.startsWith(".") && !/[/\\]/.test(name) && !hasControl(name) &&
    new TextEncoder().encode(name).length <= 255;
}
