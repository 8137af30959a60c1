/**
 * The few typed errors tyhooks throws. Everything else is a value: a run record, a decision, a
 * warning. Only `main.ts` turns these into exit codes.
 *
 * @module
 */

/**
 * A bad command line or a bad input given on it (flag, argument, task JSON). Exit code 64.
 *
 * @example
 * ```ts
 * import { UsageError } from "./errors.ts";
 * const err = new UsageError('Unknown flag "--colour"', "hint: see tyhooks --help");
 * console.assert(err.message.startsWith("Unknown flag"));
 * ```
 */
export class UsageError extends Error {
  /** Always `"UsageError"`. */
  override name = "UsageError";
  /** A line telling the user how to fix it, printed after the message. */
  readonly hint: string | undefined;
  /**
   * Makes the error.
   *
   * @param message What was wrong, naming the bad input.
   * @param hint The fix, when known.
   */
  constructor(message: string, hint?: string) {
    super(message);
    this.hint = hint;
  }
}

/**
 * A `plugin.yaml` (or another file read by tyhooks) that cannot be used, with where.
 *
 * @example
 * ```ts
 * import { ManifestError } from "./errors.ts";
 * const err = new ManifestError("/p/x/plugin.yaml", '"hooks" must be a map', { line: 3, column: 7 });
 * console.assert(err.line === 3);
 * ```
 */
export class ManifestError extends Error {
  /** Always `"ManifestError"`. */
  override name = "ManifestError";
  /** The file. */
  readonly path: string;
  /** 1-based line, or null when unknown. */
  readonly line: number | null;
  /** 1-based column, or null when unknown. */
  readonly column: number | null;
  /**
   * Makes the error.
   *
   * @param path The file that is wrong.
   * @param message What is wrong with it.
   * @param where Line and column, when known.
   */
  constructor(path: string, message: string, where: { line?: number; column?: number } = {}) {
    super(message);
    this.path = path;
    this.line = where.line ?? null;
    this.column = where.column ?? null;
  }
}

/**
 * A failure of tyhooks itself while doing its job (not a script's failure, which is a record).
 * Exit code 1.
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
  /**
   * Makes the error.
   *
   * @param message What went wrong.
   * @param options The cause, and the fix when known (`hint: ...`).
   */
  constructor(message: string, options: ErrorOptions & { hint?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.hint = options.hint;
  }
}
