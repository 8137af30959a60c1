/**
 * Plugin folder names: `plugins add` installs into `<plugins-dir>/<name>`, so a name must be one
 * safe path segment.
 *
 * @module
 */

/**
 * Can `name` be a plugin's folder name? One path segment, not `.`/`..`, not hidden (discovery
 * skips dot-folders), no control characters, at most 255 bytes.
 */
export function isSafeDirName(name: string): boolean {
  return name !== "" && !name.startsWith(".") && !/[/\\]/.test(name) &&
    !hasControlCharacters(name) && new TextEncoder().encode(name).length <= 255;
}

/**
 * Does `text` hold a control character (NUL, newline, escape...)? Such names would break
 * listings, logs and environment variables.
 */
export function hasControlCharacters(text: string): boolean {
  // deno-lint-ignore no-control-regex -- matching control characters is the point
  return /[\x00-\x1f\x7f]/.test(text);
}

/**
 * The folder name a source suggests: its last path segment, without a trailing `.git`.
 *
 * @param source A git URL or a local path.
 * @returns E.g. `tracker` for `https://host/me/tracker.git` or `git@host:me/tracker.git`.
 */
export function sourceBaseName(source: string): string {
  const last = source.replace(/[/\\]+$/, "").split(/[/\\:]/).at(-1) ?? "";
  return last.replace(/\.git$/, "");
}
