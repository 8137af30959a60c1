/**
 * Paths: POSIX path arithmetic, with the results `node:path` gives (a test compares them), and
 * tyhooks' default directories, matching Go's `os.UserConfigDir` and `os.UserCacheDir` as ty uses
 * them (each requires `--allow-env`). Importing `node:path` makes Deno evaluate about 20 of its
 * Node compatibility modules, several milliseconds of every start; tyhooks runs on Linux and macOS
 * only (sessions, `setsid`), so `/` is the only separator.
 *
 * @module
 */

function env(name: string): string | undefined {
  const value = Deno.env.get(name);
  return value === undefined || value === "" ? undefined : value;
}

// Go's os.UserConfigDir and os.UserCacheDir refuse a relative XDG path rather than resolve it
// against whatever the working directory happens to be.
function absoluteEnv(name: string): string | undefined {
  const value = env(name);
  if (value !== undefined && !isAbsolute(value)) {
    throw new Error(`Cannot use $${name}: "${value}" is a relative path, it must be absolute`);
  }
  return value;
}

/** `$HOME`; throws when it is not set. */
export function home(): string {
  const value = env("HOME");
  if (value === undefined) throw new Error("Cannot find the home directory: $HOME is not set");
  return value;
}

/**
 * The user config dir, as Go's `os.UserConfigDir` gives it (so tyhooks finds exactly ty's
 * plugins): on macOS always `$HOME/Library/Application Support` (Go ignores `XDG_CONFIG_HOME`
 * there); elsewhere `$XDG_CONFIG_HOME`, else `$HOME/.config`. `os` is for tests.
 */
export function configDir(options: { os?: typeof Deno.build.os } = {}): string {
  if ((options.os ?? Deno.build.os) === "darwin") {
    return join(home(), "Library", "Application Support");
  }
  return absoluteEnv("XDG_CONFIG_HOME") ?? join(home(), ".config");
}

/** The user cache dir: `$XDG_CACHE_HOME`, else `$HOME/.cache` (macOS: `$HOME/Library/Caches`). */
export function cacheDir(): string {
  const xdg = absoluteEnv("XDG_CACHE_HOME");
  if (xdg !== undefined) return xdg;
  if (Deno.build.os === "darwin") return join(home(), "Library", "Caches");
  return join(home(), ".cache");
}

/** The user state dir: `$XDG_STATE_HOME`, else `$HOME/.local/state` (macOS too: Go has none). */
export function stateDir(): string {
  return absoluteEnv("XDG_STATE_HOME") ?? join(home(), ".local", "state");
}

/**
 * The plugins dir: `flag` (`--plugins-dir`), else `$TY_PLUGINS_DIR`, else
 * `<config>/task/plugins`. It may not exist: then it holds no plugins.
 *
 * @example
 * ```ts
 * import { pluginsDir } from "./paths.ts";
 * console.assert(pluginsDir("/x") === "/x");
 * console.assert(pluginsDir("rel").startsWith("/"));
 * ```
 */
export function pluginsDir(flag?: string): string {
  // Absolute, because scripts run with their plugin dir (or the hooks dir) as working directory.
  return resolve(flag ?? env("TY_PLUGINS_DIR") ?? join(configDir(), "task", "plugins"));
}

/**
 * The legacy hooks dir: `flag` (`--hooks-dir`), else `<config>/task/hooks`.
 *
 * @example
 * ```ts
 * import { hooksDir } from "./paths.ts";
 * console.assert(hooksDir("/h") === "/h");
 * console.assert(hooksDir().endsWith("/task/hooks"));
 * ```
 */
export function hooksDir(flag?: string): string {
  return resolve(flag ?? join(configDir(), "task", "hooks"));
}

/** The daemon's runtime dir: `$XDG_RUNTIME_DIR`, else `<cache>/tyhooks`. */
export function runtimeDir(): string {
  return absoluteEnv("XDG_RUNTIME_DIR") ?? join(cacheDir(), "tyhooks");
}

/** The daemon's default socket, `<runtime>/tyhooks.sock`: where `serve` binds and clients look. */
export function defaultSocket(): string {
  return join(runtimeDir(), "tyhooks.sock");
}

/** The socket clients look for the daemon on: `$TYHOOKS_DAEMON` (PATH or `unix:PATH`), else the default. */
export function daemonSocket(): string {
  const named = Deno.env.get("TYHOOKS_DAEMON");
  if (!named) return defaultSocket();
  return named.startsWith("unix:") ? named.slice("unix:".length) : named;
}

// POSIX path arithmetic.

/** The path separator. */
export const sep = "/";

/** True when `path` starts at the root. */
export function isAbsolute(path: string): boolean {
  return path.startsWith("/");
}

// A path with none of these is its own normal form: most paths, joined in loops of thousands.
const NOT_NORMAL = /(^|\/)\.{1,2}(\/|$)|\/\//;

/** `.` and `..` folded and repeated slashes collapsed; a trailing slash is kept. */
export function normalize(path: string): string {
  if (path === "") return ".";
  if (!NOT_NORMAL.test(path)) return path;
  const absolute = isAbsolute(path);
  const folded = collapseDots(path, absolute);
  const trailing = path.endsWith("/");
  if (folded === "") return absolute ? "/" : trailing ? "./" : ".";
  return (absolute ? "/" : "") + folded + (trailing ? "/" : "");
}

/** The non-empty parts joined with `/`, then normalized; `.` when nothing is left. */
export function join(...parts: string[]): string {
  let joined = "";
  for (const part of parts) if (part !== "") joined = joined === "" ? part : `${joined}/${part}`;
  return joined === "" ? "." : normalize(joined);
}

/**
 * The absolute path the parts lead to, read from right to left until one is absolute (the
 * working directory when none is), without a trailing slash.
 */
export function resolve(...parts: string[]): string {
  let path = "";
  let absolute = false;
  for (let i = parts.length - 1; i >= -1 && !absolute; i--) {
    const part = i >= 0 ? parts[i] : Deno.cwd();
    if (part === "") continue;
    path = path === "" ? part : `${part}/${path}`;
    absolute = isAbsolute(part);
  }
  const folded = collapseDots(path, absolute);
  return absolute ? `/${folded}` : folded === "" ? "." : folded;
}

/** Everything before the last part of `path` (`.` or `/` when there is nothing before it). */
export function dirname(path: string): string {
  let end = path.length;
  while (end > 1 && path[end - 1] === "/") end--;
  const slash = path.lastIndexOf("/", end - 1);
  if (slash === -1) return ".";
  if (slash === 0) return "/";
  // node:path keeps a leading `//` whole (POSIX lets `//` mean something of its own).
  if (slash === 1 && path[0] === "/") return "//";
  return path.slice(0, slash);
}

/** The last part of `path`, trailing slashes ignored. */
export function basename(path: string): string {
  let end = path.length;
  while (end > 0 && path[end - 1] === "/") end--;
  return path.slice(path.lastIndexOf("/", end - 1) + 1, end);
}

/** The extension of the last part of `path`, from its last dot (`""` for `.x` and `..`). */
export function extname(path: string): string {
  const base = basename(path);
  const dot = base.lastIndexOf(".");
  return dot <= 0 || base === ".." ? "" : base.slice(dot);
}

/** The way from `from` to `to` (both resolved first); `""` when they are the same. */
export function relative(from: string, to: string): string {
  const fromParts = parts(resolve(from));
  const toParts = parts(resolve(to));
  let common = 0;
  while (
    common < fromParts.length && common < toParts.length &&
    fromParts[common] === toParts[common]
  ) common++;
  return [...fromParts.slice(common).map(() => ".."), ...toParts.slice(common)].join("/");
}

function parts(absolute: string): string[] {
  return absolute === "/" ? [] : absolute.slice(1).split("/");
}

/** The parts of `path` with `.` and empty parts dropped and `..` applied, joined with `/`. */
function collapseDots(path: string, absolute: boolean): string {
  const out: string[] = [];
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") out.push(part);
    else if (out.length > 0 && out[out.length - 1] !== "..") out.pop();
    else if (!absolute) out.push("..");
  }
  return out.join("/");
}
