/**
 * `hosts sync`: make hosts able to answer `tyhooks probe` over ssh, in at most three ssh runs a
 * host within its timeout: inspect (the hashes of what a sync manages there), copy only what
 * differs (one tar stream, each file renamed into place so a probe meanwhile sees the old or the
 * new), then probe as pick-host will. The host's login shell must accept `sh -c '...'`.
 *
 * @module
 */

import { createLimit } from "../async.ts";
import type { HostFacts } from "../wire/host_facts.ts";
import { sshCommand } from "./ssh.ts";
import { runScript, succeeded } from "../process/run_script.ts";
import { askHost, formatBytes, sshFailure } from "./pick.ts";
import { join } from "../paths.ts";
import type { Payload, PayloadFile } from "./payload.ts";
import { type Found, INSPECT, parseInspect, stage, unpackCommand } from "./sync_scripts.ts";

export const DEFAULT_SYNC_TIMEOUT_MS = 120_000;
/** Hosts synced at once: each may be sent a 100 MiB runtime. */
export const SYNC_PARALLELISM = 8;

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
  /** The ssh program and options; default {@linkcode sshCommand}'s. */
  ssh?: string[];
  signal?: AbortSignal;
}

/**
 * Syncs every host, at most {@linkcode SYNC_PARALLELISM} at once, each within its own timeout;
 * never rejects for a host's sake. Requires `--allow-run`, `--allow-read`, `--allow-write`
 * (staging in the payload's scratch dir).
 */
export async function syncHosts(
  hosts: string[],
  payload: Payload,
  options: SyncOptions = {},
): Promise<SyncOutcome[]> {
  const ssh = options.ssh ?? sshCommand();
  const limit = createLimit(SYNC_PARALLELISM);
  return await Promise.all(
    hosts.map((host, index) =>
      limit(() =>
        syncHost(host, payload, { ...options, ssh, stage: join(payload.scratch, `host-${index}`) })
      )
    ),
  );
}

/** A step that failed, saying why; the host's outcome carries it. */
class SyncFailure extends Error {}

/** What the steps of one host's sync share. */
interface HostSync {
  host: string;
  ssh: string[];
  /** The host's staging dir here. */
  stage: string;
  /** The whole sync's bound, and what is left of it now. */
  timeoutMs: number;
  left: () => number;
  signal?: AbortSignal;
}

async function syncHost(
  host: string,
  payload: Payload,
  options: SyncOptions & { ssh: string[]; stage: string },
): Promise<SyncOutcome> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_SYNC_TIMEOUT_MS;
  const sync: HostSync = {
    host,
    ssh: options.ssh,
    stage: options.stage,
    timeoutMs,
    left: () => Math.max(1, Math.floor(started + timeoutMs - performance.now())),
    signal: options.signal,
  };
  const outcome: SyncOutcome = {
    host,
    copied: [],
    copied_bytes: 0,
    facts: null,
    error: null,
    warnings: [],
    duration_ms: 0,
  };
  try {
    const found = await inspect(sync, payload);
    const send = (await wantedFiles(found, payload))
      .filter((file) => found.hashes.get(file.dest) !== file.sha256);
    if (send.length > 0) {
      await copy(sync, send);
      outcome.copied = send.map((file) => hostName(file, found));
      outcome.copied_bytes = send.reduce((sum, file) => sum + file.size, 0);
    }
    outcome.facts = await probe(sync);
    outcome.warnings = pathWarnings(host, found);
  } catch (error) {
    if (!(error instanceof SyncFailure)) throw error;
    outcome.error = error.message;
  }
  outcome.duration_ms = Math.round(performance.now() - started);
  return outcome;
}

/** Step 1: runs the inspect script on the host. */
async function inspect(sync: HostSync, payload: Payload): Promise<Found> {
  const result = await runScript(sync.ssh[0], {
    args: [...sync.ssh.slice(1), sync.host, payload.plugins.length > 0 ? "sh -s plugins" : "sh -s"],
    stdin: INSPECT,
    timeoutMs: sync.left(),
    signal: sync.signal,
  });
  if (!succeeded(result)) {
    throw new SyncFailure(`cannot inspect: ${sshFailure(result, sync.timeoutMs)}`);
  }
  const found = parseInspect(result.stdout);
  if (typeof found === "string") throw new SyncFailure(`cannot inspect: ${found}`);
  return found;
}

const OS_NAMES: Record<string, string> = { Linux: "linux", Darwin: "darwin" };
const ARCH_NAMES: Record<string, string> = { amd64: "x86_64", arm64: "aarch64" };

/**
 * Step 2: what the host should have: tyhooks, the Deno to run it with when the host lacks that
 * version, the plugins. Fails when the host cannot run what this tyhooks can send.
 */
async function wantedFiles(found: Found, payload: Payload): Promise<PayloadFile[]> {
  const wanted: PayloadFile[] = [...payload.tyhooks];
  const native = OS_NAMES[found.os] === Deno.build.os &&
    (ARCH_NAMES[found.arch] ?? found.arch) === Deno.build.arch;
  const here = `${Deno.build.os} ${Deno.build.arch}`;
  if (payload.kind === "binary" && !native) {
    throw new SyncFailure(
      `the host is ${found.os} ${found.arch} and this tyhooks binary is for ${here} ` +
        "(hint: run hosts sync from a tyhooks built for the host, or from source with deno)",
    );
  }
  const deno = payload.deno;
  if (deno !== null && (found.deno !== deno.version || found.hashes.has("share/deno"))) {
    if (!native) {
      throw new SyncFailure(
        `the host has no deno ${deno.version} and is ${found.os} ${found.arch}, ` +
          `not ${here} like the Deno running this tyhooks ` +
          `(hint: install deno ${deno.version} on the host)`,
      );
    }
    wanted.push(await deno.file());
  }
  return [...wanted, ...payload.plugins];
}

/** Step 3: sends `files` as one tar stream, which the host unpacks and moves into place. */
async function copy(sync: HostSync, files: PayloadFile[]): Promise<void> {
  await stage(sync.stage, files);
  const copied = await runScript("/bin/sh", {
    args: [
      "-c",
      'stage=$1; shift; tar -chf - -C "$stage" . | "$@"',
      "sh",
      sync.stage,
      ...sync.ssh,
      sync.host,
      unpackCommand(),
    ],
    timeoutMs: sync.left(),
    signal: sync.signal,
  });
  await Deno.remove(sync.stage, { recursive: true }).catch(() => {});
  if (!succeeded(copied)) {
    const count = files.length === 1 ? "1 file" : `${files.length} files`;
    throw new SyncFailure(`cannot copy ${count}: ${sshFailure(copied, sync.timeoutMs)}`);
  }
}

/** A file's name as on the host, its home as "~". */
function hostName(file: PayloadFile, found: Found): string {
  const plugins = found.pluginsDir.startsWith(`${found.home}/`)
    ? `~${found.pluginsDir.slice(found.home.length)}`
    : found.pluginsDir;
  return file.dest.replace(/^bin\//, "~/.local/bin/")
    .replace(/^share\//, "~/.local/share/tyhooks/")
    .replace(/^plugins\//, `${plugins}/`);
}

/** Step 4: probes the host as pick-host will, but by path (PATH is checked by the warnings). */
async function probe(sync: HostSync): Promise<HostFacts> {
  const probed = await askHost(
    {
      name: sync.host,
      workdir: "",
      probe: [...sync.ssh, sync.host, "~/.local/bin/tyhooks probe"],
      line: 0,
    },
    { timeoutMs: sync.left(), deadlineMs: sync.timeoutMs, graceMs: 500, signal: sync.signal },
  );
  if (probed.facts === null) throw new SyncFailure(`tyhooks probe failed: ${probed.reason}`);
  return probed.facts;
}

/** What works but needs a person's look: tyhooks not found first on the PATH ssh commands get. */
function pathWarnings(host: string, found: Found): string[] {
  if (!found.onPath) {
    return [
      `"~/.local/bin" is not on the PATH ssh commands get on "${host}", so pick-host's default ` +
      'probe ("tyhooks probe") will not find tyhooks there (hint: add it to PATH in a file the ' +
      "host's shell reads for ssh commands: ~/.bashrc above its interactive check, ~/.zshenv)",
    ];
  }
  const mine = `${found.home}/.local/bin/tyhooks`;
  if (found.found !== "" && found.found !== mine) {
    return [
      `"tyhooks" on "${host}" is "${found.found}", which comes before ~/.local/bin on its PATH`,
    ];
  }
  return [];
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
