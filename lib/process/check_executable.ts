/**
 * A cheap check before spawning, so the common start failures get a clear message instead of
 * an exit code from the isolator.
 *
 * @module
 */

/**
 * Checks that `script` is a regular executable file. Names without a slash are looked up on
 * PATH at exec time and are not checked here.
 *
 * @param script The path.
 * @returns Null when it looks runnable, else why not.
 */
export async function checkExecutable(script: string): Promise<string | null> {
  if (!script.includes("/")) return null;
  let info: Deno.FileInfo;
  try {
    info = await Deno.stat(script);
  } catch (error) {
    if (error instanceof Deno.errors.NotFound) return `Cannot start "${script}": no such file`;
    return `Cannot start "${script}": ${(error as Error).message}`;
  }
  if (!info.isFile) return `Cannot start "${script}": not a regular file`;
  if (info.mode !== null && (info.mode & 0o111) === 0) {
    return `Cannot start "${script}": not executable (hint: chmod +x "${script}")`;
  }
  return null;
}
