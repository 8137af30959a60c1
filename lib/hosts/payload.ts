/**
 * What `hosts sync` puts on a host, gathered once for all: tyhooks (the compiled binary, else the
 * bundle, its launcher and this Deno), and the plugins dir when asked; each hashed, so an unchanged
 * host is sent nothing. Named by where they go: `bin/X` is `~/.local/bin/X`, `share/X` is
 * `~/.local/share/tyhooks/X`, `plugins/X` the host's plugins dir's `X`.
 *
 * @module
 */

import { createHash } from "node:crypto";
import { fileURLToPath } from "node:url";
import { failureReason, runScript, succeeded } from "../process/run_script.ts";
import { RUN_FLAGS } from "../process/detach.ts";
import { basename, dirname, join, relative, resolve } from "../paths.ts";
import { isFile } from "../fs.ts";
import { RunError } from "../errors.ts";
import { quoted } from "../text.ts";

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
  signal?: AbortSignal;
}

/** Files of a plugins dir sent at most; a tree bigger than this is not a plugins dir. */
export const MAX_PLUGIN_FILES = 10_000;
/** A plugin file bigger than this (a database, a model, a log) is not sent: it is data, not code. */
export const MAX_PLUGIN_FILE_BYTES = 64 * 1024 * 1024;
/** Dirs of a plugins dir walked at most, so symlinks fanning out cannot make the walk explode. */
export const MAX_PLUGIN_DIRS = 10_000;
/** Bound on building the bundle. */
const BUNDLE_TIMEOUT_MS = 120_000;

/**
 * Gathers and hashes what `hosts sync` sends (the Deno runtime only when a host needs it), into a
 * scratch dir the caller removes. Requires `--allow-read`, `--allow-write`, `--allow-run`.
 */
export async function preparePayload(options: PayloadOptions = {}): Promise<Payload> {
  const scratch = await Deno.makeTempDir({ prefix: "tyhooks-sync-" });
  try {
    const plugins = options.pluginsDir === undefined
      ? { plugins: [], skipped: [] }
      : await listPlugins(options.pluginsDir, options.signal);
    const binary = options.binary ?? (Deno.build.standalone ? Deno.execPath() : undefined);
    if (binary !== undefined) {
      const tyhooks = [await payloadFile("bin/tyhooks", binary)];
      return { kind: "binary", tyhooks, deno: null, ...plugins, scratch };
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
    return isFile(whole) ? whole : fileURLToPath(url);
  }
  const main = fileURLToPath(new URL("../../main.ts", url));
  const out = join(scratch, "tyhooks.js");
  const config = join(dirname(main), "deno.json");
  const configFlags = isFile(config) ? ["--config", config] : [];
  const built = await runScript(Deno.execPath(), {
    args: ["bundle", "--quiet", "--platform", "deno", ...configFlags, "--output", out, main],
    cwd: dirname(main),
    env: { NO_COLOR: "1" },
    timeoutMs: BUNDLE_TIMEOUT_MS,
    signal: options.signal,
  });
  if (!succeeded(built)) {
    const why = built.stderr.trim().split("\n").slice(-3).join(" ").trim();
    throw new RunError(
      `Cannot bundle "${basename(main)}" to send it: ${failureReason(built, BUNDLE_TIMEOUT_MS)}` +
        (why ? `: ${why}` : ""),
    );
  }
  return out;
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
