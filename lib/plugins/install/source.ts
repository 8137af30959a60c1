/**
 * What `plugins add SOURCE` accepts, as ty accepts it: a git URL, a GitHub shorthand, or a local
 * path; and the `--ref` and `--name` given with it. Everything git is given is checked here
 * first, so that no SOURCE or REF can reach git as an option or through a transport other than
 * https, ssh and file (no `ext::`, no `fd::`).
 *
 * @module
 */

import { hasControl, quoted } from "../../text.ts";
import { basename, resolve } from "../../paths.ts";
import { InputError } from "../../errors.ts";
import { isSafeDirName } from "../scaffold.ts";

/** A parsed SOURCE: a URL git clones, or a local folder (cloned when a repository, else copied). */
export type InstallSource =
  | { kind: "git"; url: string }
  | { kind: "local"; path: string };

/** The transports git may use for an install (`GIT_ALLOW_PROTOCOL`). */
export const ALLOWED_PROTOCOLS = "https:ssh:file";

const FORMS = [
  "hint: accepted forms:",
  "  https://host/owner/repo.git, ssh://[user@]host/path, git@host:owner/repo.git, file:///path",
  "  owner/repo or github.com/owner/repo (GitHub)",
  "  ./dir, ../dir, /dir, ~/dir (a local folder or repository)",
].join("\n");

// user@host:path, as scp and git write it. Neither user nor host may look like an option.
const SCP_LIKE = /^([A-Za-z0-9._~][A-Za-z0-9._~-]*)@([A-Za-z0-9.][A-Za-z0-9.-]*):(.+)$/;
const GITHUB_NAME = /^[A-Za-z0-9_.][A-Za-z0-9_.-]*$/;

/**
 * Parses SOURCE (an `InputError` for any other form). Requires `--allow-read` (a bare word naming
 * a folder is a path, as in ty) and `--allow-env` (HOME, for `~`).
 */
export async function parseInstallSource(source: string): Promise<InstallSource> {
  const text = source.trim();
  const bad = (why: string) =>
    new InputError(`Invalid plugin source ${quoted(source)}: ${why}`, {
      input: "source",
      hint: FORMS,
    });
  if (text === "") throw bad("it is empty");
  if (hasControl(text)) throw bad("it holds control characters");
  if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(text)) return { kind: "git", url: checkUrl(text, bad) };
  if (text.startsWith("github.com/")) {
    return { kind: "git", url: github(text.slice("github.com/".length), bad) };
  }
  const scp = SCP_LIKE.exec(text);
  if (scp !== null) {
    if (scp[3].startsWith("-")) throw bad("its path starts with -");
    return { kind: "git", url: text };
  }
  if (/^(?:\.{1,2}\/|\/|~\/|~$|\.{1,2}$)/.test(text)) return { kind: "local", path: local(text) };
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(text)) throw bad("that git transport is not allowed");
  // ty: a bare word naming an existing folder is a path; otherwise owner/repo means GitHub.
  if ((await Deno.stat(text).catch(() => null))?.isDirectory) {
    return { kind: "local", path: resolve(text) };
  }
  if (text.split("/").length === 2 && !/\s/.test(text)) {
    return { kind: "git", url: github(text, bad) };
  }
  throw bad("it is not a git URL, owner/repo, or a local path");
}

function checkUrl(text: string, bad: (why: string) => InputError): string {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw bad("it is not a valid URL");
  }
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (!ALLOWED_PROTOCOLS.split(":").includes(scheme)) {
    throw bad(`the ${quoted(scheme)} transport is not allowed (https, ssh or file)`);
  }
  if (scheme !== "file" && (url.hostname === "" || url.hostname.startsWith("-"))) {
    throw bad("its host is empty or starts with -");
  }
  if (url.username.startsWith("-")) throw bad("its user starts with -");
  return text;
}

function github(path: string, bad: (why: string) => InputError): string {
  const parts = path.replace(/\/+$/, "").replace(/\.git$/, "").split("/");
  if (parts.length !== 2 || !parts.every((p) => GITHUB_NAME.test(p) && p !== "." && p !== "..")) {
    throw bad("expected owner/repo");
  }
  return `https://github.com/${parts[0]}/${parts[1]}.git`;
}

function local(path: string): string {
  if (path === "~" || path.startsWith("~/")) {
    const home = Deno.env.get("HOME");
    if (home) return resolve(home, path.slice(2));
  }
  return resolve(path);
}

/**
 * Checks a `--ref` (or, naming it `what`, a recorded one): a branch, tag or commit name that can
 * never be read as an option.
 */
export function checkRef(ref: string, what = 'flag "--ref"'): string {
  if (ref === "" || ref.startsWith("-") || /\s/.test(ref) || hasControl(ref)) {
    throw new InputError(
      `Invalid value ${quoted(ref)} for ${what}: expected a branch, tag or commit`,
      { input: "--ref", hint: "hint: a ref never starts with - and holds no spaces" },
    );
  }
  return ref;
}

/**
 * Can `name` be an install folder? A safe plugin folder name that `plugins update` and `remove`
 * never read as a flag (`-rf`).
 */
export function isInstallFolder(name: string): boolean {
  return isSafeDirName(name) && !name.startsWith("-");
}

/** Checks a `--name`: one install folder name ({@linkcode isInstallFolder}). */
export function checkInstallName(name: string): string {
  if (!isInstallFolder(name)) {
    throw new InputError(
      `Invalid value ${quoted(name)} for flag "--name": expected one folder name`,
      {
        input: "--name",
        hint: "hint: letters, digits, - and _ are safe; no /, and no - or . first",
      },
    );
  }
  return name;
}

/**
 * The install folder ty would use for a source (not yet checked to be safe): the repository's or
 * folder's base name without `.git` (`…/ty-notify.git` -> `ty-notify`).
 */
export function installFolderName(source: InstallSource): string {
  if (source.kind === "local") return basename(source.path).replace(/\.git$/, "");
  const path = source.url.replace(/[?#].*$/, "").replace(/\/+$/, "");
  const last = path.split(/[/:]/).at(-1) ?? "";
  return last.replace(/\.git$/, "");
}

/**
 * Do two recorded sources name the same repository? Trailing slashes and `.git` do not count,
 * so ty's `https://github.com/o/r` and tyhooks' `https://github.com/o/r.git` agree.
 */
export function sameSource(a: string, b: string): boolean {
  const norm = (s: string) => s.trim().replace(/\/+$/, "").replace(/\.git$/, "");
  return norm(a) === norm(b);
}
