/**
 * The few typed errors the library throws. Everything else is a value: a run record, a decision,
 * a warning. Only `main.ts` turns these into exit codes, and the daemon into HTTP statuses.
 *
 * @module
 */

/**
 * A value given to the library that it cannot use: a task, a `--listen` address, a token file, a
 * plugin source. The command line exits 64 on it.
 *
 * @example
 * ```ts
 * import { InputError } from "./errors.ts";
 * const err = new InputError('Invalid value "7700" for flag "--listen"', {
 *   input: "--listen",
 *   hint: "hint: use unix:PATH, HOST:PORT or [IPV6]:PORT",
 * });
 * console.assert(err.input === "--listen" && err.hint?.startsWith("hint:"));
 * ```
 */
export class InputError extends Error {
  /** Always `"InputError"`. */
  override name = "InputError";
  /** Which input was wrong, e.g. `--listen`, `--task-json`, `--token-file`, `source`. */
  readonly input: string;
  /** A line telling the user how to fix it, printed after the message. */
  readonly hint: string | undefined;
  /** `message` names the bad input; `options` says which it was and the fix, when known. */
  constructor(message: string, options: { input: string; hint?: string }) {
    super(message);
    this.input = options.input;
    this.hint = options.hint;
  }
}

/**
 * A plugin or a plugin's action that the index does not hold. The command line exits 64 on it,
 * the daemon answers 404.
 *
 * @example
 * ```ts
 * import { NotFoundError } from "./errors.ts";
 * const err = new NotFoundError({ kind: "action", name: "pull", plugin: "sync", known: ["push"] });
 * console.assert(err.message === 'Unknown action "pull" in plugin "sync"');
 * console.assert(err.hint === 'hint: its actions: "push"');
 * ```
 */
export class NotFoundError extends Error {
  /** Always `"NotFoundError"`. */
  override name = "NotFoundError";
  /** What was looked for. */
  readonly kind: "plugin" | "action";
  /** The name asked for. */
  readonly wanted: string;
  /** The plugin searched, for an action; null for a plugin. */
  readonly plugin: string | null;
  /** The names that do exist. */
  readonly known: readonly string[];
  /** The names that do exist, as a line printed after the message. */
  readonly hint: string;
  /** Words the message and the hint from what was looked for, where, and what exists. */
  constructor(
    what: { kind: "plugin" | "action"; name: string; plugin?: string; known: readonly string[] },
  ) {
    const names = what.known.map((n) => `"${n}"`).join(", ") || "none";
    const where = what.kind === "plugin" ? "" : ` in plugin "${what.plugin}"`;
    super(`Unknown ${what.kind} "${what.name}"${where}`);
    this.kind = what.kind;
    this.wanted = what.name;
    this.plugin = what.plugin ?? null;
    this.known = what.known;
    this.hint = `hint: ${what.kind === "plugin" ? "installed plugins" : "its actions"}: ${names}`;
  }
}

/**
 * A hosts file (`pick-host --hosts`, `hosts sync`) with a line that cannot be used.
 *
 * @example
 * ```ts
 * import { HostsFileError } from "./errors.ts";
 * const err = new HostsFileError("/etc/hosts.txt", 'Invalid line in hosts file "/etc/hosts.txt:3"', 3);
 * console.assert(err.line === 3 && err.path === "/etc/hosts.txt");
 * ```
 */
export class HostsFileError extends Error {
  /** Always `"HostsFileError"`. */
  override name = "HostsFileError";
  /** The file. */
  readonly path: string;
  /** The 1-based line. */
  readonly line: number;
  /** `message` says what is wrong with line `line` of the file at `path`. */
  constructor(path: string, message: string, line: number) {
    super(message);
    this.path = path;
    this.line = line;
  }
}

/**
 * A failure of tyhooks itself while doing its job (not a script's failure, which is a record).
 * The command line exits 1 on it.
 *
 * @example
 * ```ts
 * import { RunError } from "./errors.ts";
 * const err = new RunError('Cannot copy "a" to "b"', { cause: new Error("EACCES") });
 * console.assert(err.cause instanceof Error);
 * ```
 */
export class RunError extends Error {
  /** Always `"RunError"`. */
  override name = "RunError";
  /** A line telling the user how to fix it, printed after the message. */
  readonly hint: string | undefined;
  /** `message` says what went wrong; `options` holds the cause and the fix (`hint: ...`). */
  constructor(message: string, options: ErrorOptions & { hint?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options.hint;
  }
}
