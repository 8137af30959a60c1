/**
 * `hosts sync`: make hosts able to answer `tyhooks probe` over ssh. For each host, at most three
 * ssh runs, all through the runner within the host's timeout:
 *
 * 1. inspect: a script on ssh's stdin (`sh -s`) reports the host's OS, its Deno, its PATH, and
 *    the sha256 of every file a sync manages there;
 * 2. copy, only when some hash differs: the files that differ, as one tar stream, unpacked into
 *    a staging dir and moved into place (each file replaced by a rename, so a probe running
 *    meanwhile sees the old file or the new one);
 * 3. probe: `~/.local/bin/tyhooks probe`, its answer checked as pick-host checks it.
 *
 * The host's login shell must accept `sh -c '...'` (sh, bash, zsh, ksh, fish).
 *
 * @module
 */

import { createLimit } from "../async.ts";
import type { HostFacts } from "../wire/host_facts.ts";
import { sshCommand } from "./ssh.ts";
import { failureReason, runScript, succeeded } from "../process/run_script.ts";
import { askHost, formatBytes, sshFailure } from "./pick.ts";
import { createHash } from "node:crypto";
import { basename, dirname, join, relative, resolve } from "../path.ts";
import { fileURLToPath } from "node:url";
import denoConfig from "../../deno.json" with { type: "json" };
import { RunError } from "../errors.ts";
import { quoted } from "../text.ts";

export const DEFAULT_SYNC_TIMEOUT_MS = 120_000;
/** Hosts synced at once: each may be sent a 100 MiB runtime. */
export const DEFAULT_SYNC_PARALLELISM = 8;

/** What syncing one host gave (`hosts sync --json` prints a list of these). */
export interface SyncOutcome {
  host: string;
  /** What was copied, named as on the host (`~/.local/bin/tyhooks`); empty when up to date. */
  copied: string[];
  copied_bytes: number;
  /** The host's probe answer; null when the sync failed. */
  facts: HostFacts | null;
  /** Why the host failed, else null. */
  error: string | null;
  /** What works but needs a person's look (tyhooks not on the PATH ssh commands get). */
  warnings: string[];
  duration_ms: number;
}

/** Options of {@linkcode syncHosts}. */
export interface SyncOptions {
  /** Bound on each host's whole sync; default 2 min. */
  timeoutMs?: number;
  /** Hosts synced at once; default 8. */
  parallelism?: number;
  /** The ssh program and options; default {@linkcode sshCommand}'s. */
  ssh?: string[];
  signal?: AbortSignal;
}

// Where a sync puts things on the host, shared by the inspect and apply scripts. The plugins dir
// is the one tyhooks there reads by default (lib/dirs.ts: Go's os.UserConfigDir).
const WHERE = `home=\${HOME:?}
bin=$home/.local/bin
share=$home/.local/share/tyhooks
if [ -n "\${TY_PLUGINS_DIR:-}" ]; then plugins=$TY_PLUGINS_DIR
elif [ "$(uname -s)" = Darwin ]; then plugins="$home/Library/Application Support/task/plugins"
else
  case \${XDG_CONFIG_HOME:-} in
    /*) plugins=$XDG_CONFIG_HOME/task/plugins ;;
    *) plugins=$home/.config/task/plugins ;;
  esac
fi
`;

const INSPECT = `want_plugins=\${1:-}
${WHERE}
if command -v sha256sum >/dev/null 2>&1; then sum=sha256sum
elif command -v shasum >/dev/null 2>&1; then sum="shasum -a 256"
else echo "fail neither sha256sum nor shasum is installed"; exit 0
fi
echo "home $home"
echo "os $(uname -s)"
echo "arch $(uname -m)"
echo "deno $(deno --version 2>/dev/null | head -n 1)"
case ":$PATH:" in *":$bin:"*) echo "on_path yes" ;; *) echo "on_path no" ;; esac
echo "found $(command -v tyhooks 2>/dev/null)"
echo "plugins_dir $plugins"
for f in bin/tyhooks share/tyhooks.js share/deno; do
  case $f in bin/*) p=$bin/\${f#bin/} ;; *) p=$share/\${f#share/} ;; esac
  if [ -f "$p" ]; then set -- $($sum < "$p"); echo "hash $1 $f"; fi
done
if [ "$want_plugins" = plugins ] && [ -d "$plugins" ]; then
  cd "$plugins" && find . -type f ! -path "*/.git/*" -exec $sum {} + | sed "s/^/plugin /"
fi
exit 0
`;

/**
 * The command that unpacks the tar stream on the host into a staging dir of its own (syncs of one
 * host under two names do not meet) and runs the apply script in it. Run by the host's login
 * shell, so: one line, no single quote or backslash inside the quotes.
 */
function unpackCommand(): string {
  const dir = `.incoming-${crypto.randomUUID()}`;
  return `sh -c 's="\${HOME:?}/.local/share/tyhooks/${dir}" && mkdir -p "$s" && cd "$s" && ` +
    `if tar -xf -; then exec sh ./apply.sh; else cd / && rm -rf "$s" && exit 1; fi'`;
}

// Run in the staging dir; the staging dir goes whatever happens.
const APPLY = `set -eu
here=$(pwd)
trap 'cd / && rm -rf "$here"' EXIT
${WHERE}
cd "$here/files"
place() { mkdir -p -- "$(dirname -- "$2")" && mv -f -- "$1" "$2"; }
if [ -d plugins ]; then
  find plugins -type f | while IFS= read -r f; do place "$f" "$plugins/\${f#plugins/}"; done
fi
for f in share/tyhooks.js share/deno; do [ ! -f "$f" ] || place "$f" "$share/\${f#share/}"; done
[ ! -f bin/tyhooks ] || place bin/tyhooks "$bin/tyhooks"
`;

/** What the inspect script found on a host. */
interface Found {
  home: string;
  os: string;
  arch: string;
  deno: string;
  onPath: boolean;
  found: string;
  pluginsDir: string;
  hashes: Map<string, string>;
}

function parseInspect(stdout: string): Found | string {
  const found: Found = {
    home: "",
    os: "",
    arch: "",
    deno: "",
    onPath: false,
    found: "",
    pluginsDir: "",
    hashes: new Map(),
  };
  for (const line of stdout.split("\n")) {
    const space = line.indexOf(" ");
    const [key, value] = space < 0 ? [line, ""] : [line.slice(0, space), line.slice(space + 1)];
    if (key === "fail") return value;
    if (key === "home") found.home = value;
    else if (key === "os") found.os = value;
    else if (key === "arch") found.arch = value;
    else if (key === "deno") found.deno = value.match(/^deno (\S+)/)?.[1] ?? "";
    else if (key === "on_path") found.onPath = value === "yes";
    else if (key === "found") found.found = value;
    else if (key === "plugins_dir") found.pluginsDir = value;
    else if (key === "hash") {
      const [sha, dest] = [value.slice(0, 64), value.slice(65)];
      found.hashes.set(dest, sha);
    } else if (key === "plugin") {
      // sha256sum: "<hex>  ./path" (a name it had to escape starts the line with "\": not ours).
      const match = value.match(/^([0-9a-f]{64}) [ *]\.\/(.*)$/);
      if (match) found.hashes.set(`plugins/${match[2]}`, match[1]);
    }
  }
  return found.home === "" ? "the inspect script printed nothing it could read" : found;
}

const OS_NAMES: Record<string, string> = { Linux: "linux", Darwin: "darwin" };
const ARCH_NAMES: Record<string, string> = { amd64: "x86_64", arm64: "aarch64" };

/**
 * Syncs every host, at most `parallelism` at once, each within its own timeout. Never rejects for
 * a host's sake: each outcome says what was copied and what the host answered, or why it failed.
 *
 * Requires `--allow-run`, `--allow-read`, `--allow-write` (staging in the payload's scratch dir).
 */
export async function syncHosts(
  hosts: string[],
  payload: Payload,
  options: SyncOptions = {},
): Promise<SyncOutcome[]> {
  const ssh = options.ssh ?? sshCommand();
  const outcomes: SyncOutcome[] = new Array(hosts.length);
  const limit = createLimit(options.parallelism ?? DEFAULT_SYNC_PARALLELISM);
  await Promise.all(hosts.map((host, index) =>
    limit(async () => {
      outcomes[index] = await syncHost(host, payload, {
        ...options,
        ssh,
        stage: join(payload.scratch, `host-${index}`),
      });
    })
  ));

  return outcomes;
}

async function syncHost(
  host: string,
  payload: Payload,
  options: SyncOptions & { ssh: string[]; stage: string },
): Promise<SyncOutcome> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
  const left = () => Math.max(1, Math.floor(started + timeoutMs - performance.now()));
  const outcome: SyncOutcome = {
    host,
    copied: [],
    copied_bytes: 0,
    facts: null,
    error: null,
    warnings: [],
    duration_ms: 0,
  };
  const fail = (error: string) => {
    outcome.error = error;
    outcome.duration_ms = Math.round(performance.now() - started);
    return outcome;
  };
  const run = (args: string[], stdin?: string) =>
    runScript(options.ssh[0], {
      args: [...options.ssh.slice(1), ...args],
      stdin,
      timeoutMs: left(),
      signal: options.signal,
    });

  // 1. Inspect.
  const inspected = await run(
    [host, payload.plugins.length > 0 ? "sh -s plugins" : "sh -s"],
    INSPECT,
  );
  if (!succeeded(inspected)) return fail(`cannot inspect: ${sshFailure(inspected, timeoutMs)}`);
  const found = parseInspect(inspected.stdout);
  if (typeof found === "string") return fail(`cannot inspect: ${found}`);

  // 2. Decide what differs.
  const wanted: PayloadFile[] = [...payload.tyhooks];
  const native = OS_NAMES[found.os] === Deno.build.os &&
    (ARCH_NAMES[found.arch] ?? found.arch) === Deno.build.arch;
  const here = `${Deno.build.os} ${Deno.build.arch}`;
  if (payload.kind === "binary" && !native) {
    return fail(
      `the host is ${found.os} ${found.arch} and this tyhooks binary is for ${here} ` +
        "(hint: run hosts sync from a tyhooks built for the host, or from source with deno)",
    );
  }
  if (
    payload.deno !== null &&
    (found.deno !== payload.deno.version || found.hashes.has("share/deno"))
  ) {
    if (!native) {
      return fail(
        `the host has no deno ${payload.deno.version} and is ${found.os} ${found.arch}, ` +
          `not ${here} like the Deno running this tyhooks ` +
          `(hint: install deno ${payload.deno.version} on the host)`,
      );
    }
    wanted.push(await payload.deno.file());
  }
  wanted.push(...payload.plugins);
  const send = wanted.filter((file) => found.hashes.get(file.dest) !== file.sha256);

  // 3. Copy what differs.
  if (send.length > 0) {
    await stage(options.stage, send);
    const copied = await runScript("/bin/sh", {
      args: [
        "-c",
        'stage=$1; shift; tar -chf - -C "$stage" . | "$@"',
        "sh",
        options.stage,
        ...options.ssh,
        host,
        unpackCommand(),
      ],
      timeoutMs: left(),
      signal: options.signal,
    });
    await Deno.remove(options.stage, { recursive: true }).catch(() => {});
    if (!succeeded(copied)) {
      const files = send.length === 1 ? "1 file" : `${send.length} files`;
      return fail(`cannot copy ${files}: ${sshFailure(copied, timeoutMs)}`);
    }
    // Named as on the host, with its home as "~".
    const plugins = found.pluginsDir.startsWith(`${found.home}/`)
      ? `~${found.pluginsDir.slice(found.home.length)}`
      : found.pluginsDir;
    outcome.copied = send.map((file) =>
      file.dest.replace(/^bin\//, "~/.local/bin/")
        .replace(/^share\//, "~/.local/share/tyhooks/")
        .replace(/^plugins\//, `${plugins}/`)
    );
    outcome.copied_bytes = send.reduce((sum, file) => sum + file.size, 0);
  }

  // 4. Probe, as pick-host will (but by path: PATH is checked below).
  const probe = await askHost(
    {
      name: host,
      workdir: "",
      probe: [...options.ssh, host, "~/.local/bin/tyhooks probe"],
      line: 0,
    },
    { timeoutMs: left(), deadlineMs: timeoutMs, graceMs: 500, signal: options.signal },
  );
  if (probe.facts === null) return fail(`tyhooks probe failed: ${probe.reason}`);
  outcome.facts = probe.facts;

  const mine = `${found.home}/.local/bin/tyhooks`;
  if (!found.onPath) {
    outcome.warnings.push(
      `"~/.local/bin" is not on the PATH ssh commands get on "${host}", so pick-host's default ` +
        'probe ("tyhooks probe") will not find tyhooks there (hint: add it to PATH in a file the ' +
        "host's shell reads for ssh commands: ~/.bashrc above its interactive check, ~/.zshenv)",
    );
  } else if (found.found !== "" && found.found !== mine) {
    outcome.warnings.push(
      `"tyhooks" on "${host}" is "${found.found}", which comes before ~/.local/bin on its PATH`,
    );
  }
  outcome.duration_ms = Math.round(performance.now() - started);
  return outcome;
}

/** Lays out the files to send as the host's staging dir will hold them, as symlinks to the sources. */
async function stage(dir: string, files: PayloadFile[]): Promise<void> {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  for (const file of files) {
    const path = join(dir, "files", file.dest);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.symlink(file.source, path);
  }
  await Deno.writeTextFile(join(dir, "apply.sh"), APPLY);
}

/** One line a person reads per host: what was copied, or that nothing was, or why it failed. */
export function describeSync(outcome: SyncOutcome): string {
  if (outcome.error !== null) return `${outcome.host}: failed: ${outcome.error}`;
  if (outcome.copied.length === 0) return `${outcome.host}: up to date, copied nothing`;
  const shown = outcome.copied.slice(0, 5).join(", ") +
    (outcome.copied.length > 5 ? ` and ${outcome.copied.length - 5} more` : "");
  const files = outcome.copied.length === 1 ? "1 file" : `${outcome.copied.length} files`;
  return `${outcome.host}: copied ${files} (${formatBytes(outcome.copied_bytes)}): ${shown}`;
}

// What `hosts sync` puts on a host, gathered once for every host: tyhooks itself (the compiled
// binary when this tyhooks is one; else the single-file bundle, a launcher that runs it with the
// binary's grants and V8 flags, and the Deno runtime running this tyhooks, for hosts without that
// Deno), and, when asked, the plugins dir. Each file has a sha256, so an unchanged host is sent
// nothing.
// Files are named by where they go on the host: `bin/X` is `~/.local/bin/X`, `share/X` is
// `~/.local/share/tyhooks/X`, `plugins/X` is the host's plugins dir's `X`.

/**
 * The grants the binary is compiled with (deno.json's `tyhooks` permission set) as `--allow-*`
 * flags, then the V8 flags of `deno task compile`, read from deno.json here and nowhere else: the
 * launcher and the tests run tyhooks with them, so what runs is what `deno task compile` builds.
 */
export const RUN_FLAGS: readonly string[] = [
  ...Object.entries(denoConfig.permissions.tyhooks as Record<string, boolean | string[]>)
    .flatMap(([name, grant]) =>
      grant === true
        ? [`--allow-${name}`]
        : Array.isArray(grant)
        ? [`--allow-${name}=${grant.join(",")}`]
        : []
    ),
  ...(denoConfig.tasks.compile.command.match(/--v8-flags=\S+/g) ?? []),
];

/** One file to put on a host, and the local file it comes from. */
export interface PayloadFile {
  /** Where it goes: `bin/tyhooks`, `share/tyhooks.js`, `share/deno`, `plugins/<path>`. */
  dest: string;
  source: string;
  size: number;
  sha256: string;
}

/** What {@linkcode preparePayload} gathered. */
export interface Payload {
  /** `binary`: the compiled tyhooks; `bundle`: the bundle behind a launcher. */
  kind: "binary" | "bundle";
  /** tyhooks itself: `bin/tyhooks` (and `share/tyhooks.js` for a bundle). */
  tyhooks: PayloadFile[];
  /** The Deno running this tyhooks (`share/deno`), for a bundle; its hash is taken on demand. */
  deno: { version: string; file: () => Promise<PayloadFile> } | null;
  /** The plugins dir's files, when asked for. */
  plugins: PayloadFile[];
  /** Plugin files left out (a name holding a newline or backslash, a loop, past the cap). */
  skipped: string[];
  /** Scratch dir holding the built bundle and launcher; remove it when done. */
  scratch: string;
}

/** Options of {@linkcode preparePayload}. */
export interface PayloadOptions {
  /** The plugins dir to send; none when undefined. */
  pluginsDir?: string;
  /**
   * A tyhooks binary for this OS and CPU to send; default this one when tyhooks runs compiled,
   * else none (the bundle is sent).
   */
  binary?: string;
  /** Bound on building the bundle. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** Files of a plugins dir sent at most; a tree bigger than this is not a plugins dir. */
export const MAX_PLUGIN_FILES = 10_000;
/** A plugin file bigger than this (a database, a model, a log) is not sent: it is data, not code. */
export const MAX_PLUGIN_FILE_BYTES = 64 * 1024 * 1024;
/** Dirs of a plugins dir walked at most, so symlinks fanning out cannot make the walk explode. */
export const MAX_PLUGIN_DIRS = 10_000;

/**
 * Gathers what `hosts sync` sends: builds the bundle (when this tyhooks runs from source) and the
 * launcher into a scratch dir, lists the plugins dir, and hashes everything but the Deno runtime,
 * which is hashed only when a host needs it.
 *
 * The caller removes `scratch`. Requires `--allow-read`, `--allow-write` (the scratch dir) and
 * `--allow-run` (`deno bundle`).
 *
 * @throws {RunError} When the bundle cannot be built or a file cannot be read.
 */
export async function preparePayload(options: PayloadOptions = {}): Promise<Payload> {
  const scratch = await Deno.makeTempDir({ prefix: "tyhooks-sync-" });
  try {
    const plugins = options.pluginsDir === undefined
      ? { plugins: [], skipped: [] }
      : await listPlugins(options.pluginsDir, options.signal);
    const binary = options.binary ?? (Deno.build.standalone ? Deno.execPath() : undefined);
    if (binary !== undefined) {
      return {
        kind: "binary",
        tyhooks: [await payloadFile("bin/tyhooks", binary)],
        deno: null,
        ...plugins,
        scratch,
      };
    }
    const bundle = await bundleOf(import.meta.url, scratch, options);
    const launcher = join(scratch, "tyhooks");
    await Deno.writeTextFile(launcher, launcherScript(), { mode: 0o755 });
    await Deno.chmod(launcher, 0o755);
    let deno: Promise<PayloadFile> | undefined;
    return {
      kind: "bundle",
      tyhooks: [
        await payloadFile("share/tyhooks.js", bundle),
        await payloadFile("bin/tyhooks", launcher),
      ],
      deno: {
        version: Deno.version.deno,
        file: () => deno ??= payloadFile("share/deno", Deno.execPath()),
      },
      ...plugins,
      scratch,
    };
  } catch (error) {
    await Deno.remove(scratch, { recursive: true }).catch(() => {});
    throw error;
  }
}

/**
 * The launcher put at `~/.local/bin/tyhooks` with a bundle: runs `share/tyhooks/tyhooks.js` with
 * the Deno copied beside it, else the `deno` on PATH (a host that had the right one), with the
 * binary's grants and V8 flags.
 */
export function launcherScript(): string {
  return [
    "#!/bin/sh",
    "# Written by `tyhooks hosts sync`: runs the tyhooks bundle with the grants and V8 flags of the",
    "# tyhooks binary, under the Deno copied beside it, else the deno on PATH.",
    'self=$(readlink -f -- "$0" 2>/dev/null) || self=$0',
    'share=$(dirname -- "$self")/../share/tyhooks',
    "deno=$share/deno",
    '[ -x "$deno" ] || deno=deno',
    "export DENO_NO_UPDATE_CHECK=1",
    `exec "$deno" run --quiet --no-prompt --no-config ${
      RUN_FLAGS.join(" ")
    } "$share/tyhooks.js" "$@"`,
    "",
  ].join("\n");
}

/**
 * The bundle of this tyhooks: the file this module is part of when it is one (a host running a
 * synced tyhooks syncs others), else built from `main.ts` beside `lib/` (not `Deno.mainModule`,
 * which is whatever script imported the library).
 */
async function bundleOf(moduleUrl: string, scratch: string, options: PayloadOptions) {
  const url = new URL(moduleUrl);
  if (url.protocol !== "file:") {
    throw new RunError(
      `Cannot send tyhooks to a host: it runs from "${moduleUrl}", not a local file`,
    );
  }
  if (url.pathname.endsWith(".js")) {
    // A chunk of a split bundle (the npm package's lib/) has the whole one beside it.
    const whole = fileURLToPath(new URL("./tyhooks.js", url));
    return await isFile(whole) ? whole : fileURLToPath(url);
  }
  const main = fileURLToPath(new URL("../../main.ts", url));
  const out = join(scratch, "tyhooks.js");
  const config = join(dirname(main), "deno.json");
  const configFlags = await isFile(config) ? ["--config", config] : [];
  const built = await runScript(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform", "deno", ...configFlags, "--output", out, main],
    cwd: dirname(main),
    env: { NO_COLOR: "1" },
    timeoutMs: options.timeoutMs ?? 120_000,
    signal: options.signal,
  });
  if (!succeeded(built)) {
    const why = built.stderr.trim().split("\n").slice(-3).join(" ").trim();
    throw new RunError(
      `Cannot bundle "${basename(main)}" to send it: ${failureReason(built, options.timeoutMs)}` +
        (why ? `: ${why}` : ""),
    );
  }
  return out;
}

async function isFile(path: string): Promise<boolean> {
  try {
    return (await Deno.stat(path)).isFile;
  } catch {
    return false;
  }
}

/** A file's sha256 in hex, streamed: the Deno runtime is over 100 MiB. */
export async function sha256File(path: string, signal?: AbortSignal): Promise<string> {
  const hash = createHash("sha256");
  using file = await Deno.open(path);
  for await (const chunk of file.readable) {
    signal?.throwIfAborted(); // SIGTERM and --timeout end a long hash between chunks.
    hash.update(chunk);
  }
  return hash.digest("hex");
}

async function payloadFile(
  dest: string,
  source: string,
  signal?: AbortSignal,
): Promise<PayloadFile> {
  try {
    const { size } = await Deno.stat(source);
    return { dest, source, size, sha256: await sha256File(source, signal) };
  } catch (error) {
    if (signal?.aborted) throw signal.reason;
    throw new RunError(`Cannot read "${source}": ${(error as Error).message}`, { cause: error });
  }
}

/**
 * The plugins dir's regular files, symlinks followed, `.git` dirs skipped. A dir reached through
 * a symlink is sent under that path too (a collection's `shared -> ../shared` must exist on the
 * host); only a link back to a dir being walked (a loop) is left out. A name the host's
 * line-based listing cannot carry is skipped, and so is everything past the caps.
 */
async function listPlugins(
  dir: string,
  signal?: AbortSignal,
): Promise<{ plugins: PayloadFile[]; skipped: string[] }> {
  const root = resolve(dir);
  const files: PayloadFile[] = [];
  const skipped: string[] = [];
  let dirs = 0;
  const walk = async (dir: string, ancestors: Set<string>): Promise<void> => {
    let real: string;
    try {
      real = await Deno.realPath(dir);
    } catch (error) {
      if (dir === root && error instanceof Deno.errors.NotFound) return;
      throw new RunError(`Cannot read "${dir}": ${(error as Error).message}`, { cause: error });
    }
    const rel = relative(root, dir);
    if (ancestors.has(real)) return void skipped.push(`${rel}: a symlink loop`);
    if (++dirs > MAX_PLUGIN_DIRS) {
      return void skipped.push(`${rel}: more than ${MAX_PLUGIN_DIRS} dirs`);
    }
    const entries: string[] = [];
    try {
      for await (const entry of Deno.readDir(dir)) entries.push(entry.name);
    } catch (error) {
      throw new RunError(`Cannot read "${dir}": ${(error as Error).message}`, { cause: error });
    }
    const inside = new Set(ancestors).add(real);
    for (const name of entries.sort()) {
      const path = join(dir, name);
      const rel = relative(root, path);
      let info: Deno.FileInfo;
      try {
        info = await Deno.stat(path);
      } catch {
        skipped.push(`${rel}: a broken symlink`);
        continue;
      }
      if (info.isDirectory) {
        if (name !== ".git") await walk(path, inside);
      } else if (!info.isFile) {
        skipped.push(`${rel}: not a regular file`);
      } else if (/[\n\r\\]/.test(rel)) {
        skipped.push(`${quoted(rel)}: a newline or backslash in its name`);
      } else if (files.length >= MAX_PLUGIN_FILES) {
        skipped.push(`${rel}: more than ${MAX_PLUGIN_FILES} files`);
      } else if (info.size > MAX_PLUGIN_FILE_BYTES) {
        skipped.push(`${rel}: larger than ${MAX_PLUGIN_FILE_BYTES} bytes`);
      } else {
        signal?.throwIfAborted();
        files.push(await payloadFile(`plugins/${rel}`, path, signal));
      }
    }
  };
  await walk(root, new Set());
  return { plugins: files, skipped };
}
