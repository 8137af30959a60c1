/**
 * The default directories, matching Go's `os.UserConfigDir` and `os.UserCacheDir` as ty uses
 * them (each requires `--allow-env`).
 *
 * @module
 */

import { isAbsolute, join, resolve } from "./fs.ts";

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
 * import { pluginsDir } from "./dirs.ts";
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
 * import { hooksDir } from "./dirs.ts";
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
  return named ? named.replace(/^unix:/, "") : defaultSocket();
}
