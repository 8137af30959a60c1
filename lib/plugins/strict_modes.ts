/**
 * sshd's `StrictModes` for plugins: a plugin dir or script that another user could write is not
 * trusted to decide what runs. The loader still loads it (as ty does) but warns, and
 * `plugins validate` reports it.
 *
 * @module
 */

/**
 * Why `info` (a plugin dir or script) is not safe, or null when it is: writable by group or
 * others, or owned by a user other than the current one or root. Without the user id
 * (`--allow-sys`) only the mode is checked.
 *
 * @param info The file's `stat`.
 * @param path The file, for the hint.
 * @returns The reason and the fix, or null.
 */
export function unsafeMode(
  info: Deno.FileInfo,
  path: string,
): { reason: string; hint: string } | null {
  const mode = (info.mode ?? 0) & 0o777;
  if ((mode & 0o022) !== 0) {
    return {
      reason: `is writable by group or others (mode ${mode.toString(8).padStart(4, "0")})`,
      hint: `chmod go-w ${JSON.stringify(path)}`,
    };
  }
  const me = currentUid();
  if (me !== null && info.uid !== null && info.uid !== me && info.uid !== 0) {
    return {
      reason: `is owned by user ${info.uid}, not by the current user (${me}) or root`,
      hint: `chown ${me} ${JSON.stringify(path)}`,
    };
  }
  return null;
}

function currentUid(): number | null {
  try {
    return Deno.uid();
  } catch {
    return null;
  }
}
