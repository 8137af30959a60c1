/**
 * Logging to stderr, as text or as one JSON object a line. Stdout is never touched: it carries
 * only a command's answer.
 *
 * @module
 */

/** A log level. */
export type LogLevel = "debug" | "info" | "warn" | "error";
/** Log levels, lowest first. */
export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error"];
/** Structured fields attached to a log line: `key=value` pairs in text, keys in JSON. */
export type LogFields = Record<string, unknown>;

/** Where library code reports what happened; the CLI passes one that writes to stderr. */
export interface Logger {
  /** Logs at `level` unless it is below the logger's threshold. */
  log(level: LogLevel, message: string, fields?: LogFields): void;
}

/** Options of {@linkcode createLogger}. */
export interface LoggerOptions {
  /** `text` (default) or `json`. */
  format?: "text" | "json";
  /** Lowest level written; default `info`. */
  level?: LogLevel;
  /** Where lines go; default stderr. */
  write?: (line: string) => void;
}

const encoder = new TextEncoder();

function writeStderr(line: string): void {
  try {
    Deno.stderr.writeSync(encoder.encode(line));
  } catch {
    // A closed stderr (detached run, broken pipe) must never take a call down.
  }
}

/**
 * A logger writing to stderr, as text or JSON lines, from a threshold level up.
 *
 * @example
 * ```ts
 * import { createLogger } from "./log.ts";
 * const lines: string[] = [];
 * const log = createLogger({ format: "json", write: (l) => lines.push(l) });
 * log.log("warn", "Router failed", { plugin: "r" });
 * log.log("debug", "Not written: below the default threshold");
 * console.assert(lines.length === 1 && JSON.parse(lines[0]).plugin === "r");
 * ```
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const format = options.format ?? "text";
  const threshold = LOG_LEVELS.indexOf(options.level ?? "info");
  const write = options.write ?? writeStderr;
  return {
    log(level, message, fields = {}) {
      if (LOG_LEVELS.indexOf(level) < threshold) return;
      if (format === "json") {
        write(
          JSON.stringify({ time: new Date().toISOString(), level, msg: message, ...fields }) + "\n",
        );
        return;
      }
      const details = Object.entries(fields)
        .filter(([, v]) => v !== undefined)
        .map(([k, v]) => `${escapeControl(k)}=${textValue(v)}`)
        .join(" ");
      write(`tyhooks: ${level}: ${escapeControl(message)}${details ? ` (${details})` : ""}\n`);
    },
  };
}

/**
 * Escapes control characters (C0, DEL, C1) as `\x1b`: text logs carry names, paths and output
 * from plugins, scripts and probes, and a terminal must never receive their escape sequences,
 * nor a parser a line break that forges a log line.
 */
export function escapeControl(text: string): string {
  return text.replace(CONTROL, (c) => `\\x${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

// deno-lint-ignore no-control-regex -- matching control characters is the point
const CONTROL = /[\x00-\x1f\x7f-\x9f]/g;

// A field value in a text line: bare when it is one word, else quoted as JSON quotes it; control
// characters as \xNN either way.
function textValue(value: unknown): string {
  if (typeof value === "string") {
    const escaped = escapeControl(value);
    return /\s|"/.test(escaped) ? `"${escaped.replace(/["\\]/g, "\\$&")}"` : escaped;
  }
  const json = JSON.stringify(value) ?? String(value);
  // JSON already escapes C0 (as \u001b): write those as \x1b too, and escape what it leaves (C1).
  return escapeControl(json.replace(/\\u00([01][0-9a-f]|7f)/g, "\\x$1"));
}

/** A logger that drops everything; the library default. */
export const silentLogger: Logger = { log() {} };
