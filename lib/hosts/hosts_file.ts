/**
 * The hosts file `pick-host` reads: one host a line, `NAME [WORKDIR] [-- PROBE COMMAND]`.
 *
 * ```
 * # name   workdir   probe (default: ssh -o BatchMode=yes -o ConnectTimeout=2 NAME tyhooks probe)
 * gpu-1    ~/work
 * gpu-2    /srv/ty   -- ssh -J bastion gpu-2 tyhooks probe
 * build
 * ```
 *
 * @module
 */

import { HostsFileError, RunError } from "../errors.ts";
import { dirname, resolve } from "../paths.ts";
import { foreignLink, type OpenedFile, readBounded, unsafeDirReason, unsafeMode } from "../fs.ts";
import { sshCommand } from "./ssh.ts";
import { hasControl, quoted } from "../text.ts";

/** One host of a hosts file. */
export interface HostEntry {
  /** The name: the placement answer's `target`, and the ssh destination of the default probe. */
  name: string;
  /** Path on the host given as the answer's `workdir`; empty when not set. `~` is left alone. */
  workdir: string;
  /** The probe's program and arguments, run directly (a custom probe is `/bin/sh -c COMMAND`). */
  probe: string[];
  /** 1-based line in the hosts file (0 for hosts built in code). */
  line: number;
}

/** The default probe of host `name`: `tyhooks probe` over {@linkcode sshCommand}'s ssh. */
export function defaultProbe(name: string, ssh: string[] = sshCommand()): string[] {
  return [...ssh, name, "tyhooks", "probe"];
}

const SHAPE = "expected NAME [WORKDIR] [-- PROBE COMMAND]";

/**
 * Parses a hosts file; a bad line is a `HostsFileError` naming `FILE:LINE`, as is a name starting
 * with `-` (ssh would read it as an option).
 */
export function parseHostsFile(text: string, path: string): HostEntry[] {
  const hosts: HostEntry[] = [];
  let ssh: string[] | undefined;
  const seen = new Map<string, number>();
  text.split("\n").forEach((raw, index) => {
    const line = index + 1;
    const fail = (detail: string): never => {
      throw new HostsFileError(
        path,
        `Invalid line in hosts file ${quoted(`${path}:${line}`)}: ${detail}`,
        line,
      );
    };
    const content = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    if (content.trim() === "" || content.trimStart().startsWith("#")) return;
    if (content.includes("\0")) fail("it holds a NUL byte");
    const words: string[] = [];
    let command: string | undefined;
    for (const match of content.matchAll(/\S+/g)) {
      if (match[0] === "--") {
        command = content.slice(match.index + 2).trim();
        break;
      }
      words.push(match[0]);
    }
    if (command === "") fail(`nothing after "--": ${SHAPE}`);
    if (words.length === 0) fail(`no NAME before "--": ${SHAPE}`);
    if (words.length > 2) {
      const hint = command === undefined ? ' (hint: put "--" before a probe command)' : "";
      fail(`${words.length} words before the probe command: ${SHAPE}${hint}`);
    }
    const [name, workdir = ""] = words;
    if (name.startsWith("-")) fail(`host name ${quoted(name)} starts with "-"`);
    // As hosts sync refuses them: ssh, logs and terminals would each read them their own way.
    if (hasControl(name) || hasControl(workdir)) {
      fail(`${quoted(hasControl(name) ? name : workdir)} holds a control character`);
    }
    const first = seen.get(name);
    if (first !== undefined) fail(`host ${quoted(name)} is already listed on line ${first}`);
    seen.set(name, line);
    const probe = command === undefined
      ? defaultProbe(name, ssh ??= sshCommand())
      : ["/bin/sh", "-c", command];
    hosts.push({ name, workdir, probe, line });
  });
  return hosts;
}

/**
 * Reads and parses a hosts file (a `HostsFileError` for a bad line). Requires `--allow-read`.
 *
 * @example
 * ```ts
 * import { readHostsFile } from "./hosts_file.ts";
 * const path = await Deno.makeTempFile();
 * await Deno.writeTextFile(path, "# fleet\na ~/w -- true\nb\n");
 * const [a, b] = await readHostsFile(path);
 * console.assert(a.workdir === "~/w" && a.probe[0] === "/bin/sh" && b.probe.includes("tyhooks"));
 * ```
 */
export async function readHostsFile(path: string): Promise<HostEntry[]> {
  let text: string;
  // The owner and mode of the file read, not of what the path names a moment before or after:
  // whoever can swap it in between must not choose the commands.
  let opened: OpenedFile | undefined;
  try {
    text = await readBounded(path, { onOpen: (file) => opened = file });
  } catch (error) {
    throw new RunError(`Cannot read hosts file ${quoted(path)}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  const hosts = parseHostsFile(text, path);
  // StrictModes: a "-- COMMAND" line runs as the user, so nobody else may be able to write it,
  // nor put another file in its place, nor point a link on the way to another file.
  const custom = hosts.find((host) => host.probe[0] === "/bin/sh");
  if (custom === undefined) return hosts;
  const untrusted = untrustedReason(path, opened);
  if (untrusted !== null) {
    throw new RunError(
      `Cannot run the probe command of ${quoted(`${path}:${custom.line}`)}: ${untrusted.why}`,
      { hint: `hint: ${untrusted.hint}` },
    );
  }
  return hosts;
}

/** Why the probe commands of the hosts file `path`, opened as `opened`, may not run; or null. */
function untrustedReason(
  path: string,
  opened: OpenedFile | undefined,
): { why: string; hint: string } | null {
  if (opened === undefined) {
    return { why: "the file could not be checked", hint: "give a regular file" };
  }
  const unsafe = unsafeMode(opened, path);
  if (unsafe !== null) return { why: `the file ${unsafe.reason}`, hint: unsafe.hint };
  const link = foreignLink(path);
  if (link !== null) {
    return {
      why: `it is named through ${quoted(link.link)}, a symlink owned by user ${link.uid}`,
      hint: "name the hosts file itself, or a link of your own",
    };
  }
  const dir = unsafeDirReason(dirname(resolve(path)));
  if (dir !== null) {
    return {
      why: `its dir can be changed: ${dir}`,
      hint: "keep the hosts file in a dir only you can change",
    };
  }
  return null;
}
