/**
 * What `tyhooks doctor` reports: one check, its status, what was found and, when not ok, the fix.
 *
 * @module
 */

/** How a check came out: `fail` makes `doctor` exit 1, `warn` does not. */
export type CheckStatus = "ok" | "warn" | "fail";

/** One line of `doctor`: SPEC's `{"name","status","detail","fix"}`. */
export interface Check {
  /** What was checked: `runtime`, `plugins dir`, `agent claude`... */
  name: string;
  status: CheckStatus;
  /** What was found. */
  detail: string;
  /** A command or an edit that fixes it; null for `ok`. */
  fix: string | null;
}

/** A check that passed. */
export function passed(name: string, detail: string): Check {
  return { name, status: "ok", detail, fix: null };
}

/** A check that warns or fails, with its fix. */
export function problem(
  status: "warn" | "fail",
  name: string,
  options: { detail: string; fix: string },
): Check {
  return { name, status, detail: options.detail, fix: options.fix };
}

const HINT = / \(hint: (.*)\)$/s;

/**
 * A message in the project's style split into what is wrong and its fix: the trailing
 * `(hint: ...)`, else `otherwise`.
 */
export function withFix(message: string, otherwise: string): { detail: string; fix: string } {
  const hint = HINT.exec(message);
  if (hint === null) return { detail: message, fix: otherwise };
  return { detail: message.slice(0, hint.index), fix: hint[1] };
}
