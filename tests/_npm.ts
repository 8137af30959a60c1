/**
 * The npm package (README "Install"), built by `deno task npm`, packed by `npm pack` and installed
 * by `npm install -g --prefix` into a temp dir, for the tests and the benchmark that run it.
 */

import { join } from "node:path";
import { ROOT } from "./_cli.ts";

/** The package version: deno.json's. */
export const NPM_VERSION: string = JSON.parse(Deno.readTextFileSync(join(ROOT, "deno.json")))
  .version;

/** What {@linkcode installNpmPackage} made. */
export interface NpmPackage {
  /** The package as built, not installed. */
  pkg: string;
  tgz: string;
  /** The global install's prefix: `bin/tyhooks` is the command it put on PATH. */
  prefix: string;
  /** npm's environment for more installs: the same cache. */
  npmEnv: Record<string, string>;
}

async function run(cmd: string[], options: { env?: Record<string, string>; cwd?: string } = {}) {
  const out = await new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    env: options.env,
    cwd: options.cwd,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).output();
  const text = new TextDecoder();
  if (!out.success) {
    throw new Error(`${cmd.join(" ")}: exit ${out.code}\n${text.decode(out.stderr)}`);
  }
  return text.decode(out.stdout);
}

/** Runs npm with `npmEnv` (see {@linkcode NpmPackage}); throws when it fails. */
export function npm(args: string[], npmEnv: Record<string, string>): Promise<string> {
  return run(["npm", ...args], { env: npmEnv });
}

/**
 * npm's cache for these installs: a copy of the user's (its content hard-linked where it can be:
 * npm never rewrites a content file), so what CI's `npx deno@...` cached serves them offline, and
 * what they add (the tarballs, their index lines) stays out of the real one.
 */
async function npmCache(dir: string): Promise<string> {
  const real = (await run(["npm", "config", "get", "cache", "--logs-dir", dir])).trim();
  const cache = join(dir, "npm-cache");
  await Deno.mkdir(join(cache, "_cacache"), { recursive: true });
  await run([
    "sh",
    "-c",
    'cd "$0" || exit 0; [ ! -d index-v5 ] || cp -R index-v5 "$1" || exit 1; ' +
    '[ ! -d content-v2 ] || cp -Rl content-v2 "$1" 2>/dev/null || cp -R content-v2 "$1"',
    join(real, "_cacache"),
    join(cache, "_cacache"),
  ]);
  return cache;
}

/**
 * Builds the package into `dir` with `deno task npm`, packs it and installs it globally into a
 * prefix in `dir`, taking `deno` from npm's cache when it is there (`--prefer-offline`).
 */
export async function installNpmPackage(dir: string): Promise<NpmPackage> {
  const npmEnv = { npm_config_cache: await npmCache(dir), npm_config_update_notifier: "false" };
  const pkg = join(dir, "pkg");
  await run([Deno.execPath(), "task", "-q", "--config", join(ROOT, "deno.json"), "npm", pkg], {
    cwd: ROOT,
    env: { NO_COLOR: "1" },
  });
  await npm(["pack", "--pack-destination", dir, pkg], npmEnv);
  const tgz = join(dir, `tyhooks-${NPM_VERSION}.tgz`);
  const prefix = join(dir, "prefix");
  await npm(
    ["install", "-g", "--prefix", prefix, "--prefer-offline", "--no-audit", "--no-fund", tgz],
    npmEnv,
  );
  return { pkg, tgz, prefix, npmEnv };
}
