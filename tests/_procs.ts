/**
 * Test helpers for processes: fixture paths, pid files, "is anything of it still alive", and
 * waiting for what they write.
 */

import { join } from "node:path";
import { ROOT, tempDir } from "./_cli.ts";
import { liveGroupMembers } from "../lib/process/group.ts";

/** Path of a fixture script in tests/fixtures/scripts/. */
export function fixture(name: string): string {
  return join(ROOT, "tests", "fixtures", "scripts", name);
}

/** tests/fixtures/agents/: each coding agent's hook JSON as recorded, `<agent>/<event>.json`. */
export const AGENT_FIXTURES: string = join(ROOT, "tests", "fixtures", "agents");

/** The hook JSON `agent` sent on `event`, as recorded in {@linkcode AGENT_FIXTURES}. */
export function agentPayload(agent: string, event: string): string {
  return Deno.readTextFileSync(join(AGENT_FIXTURES, agent, `${event}.json`));
}

/** True when `pid` is running (a zombie counts as gone). */
export function alive(pid: number): boolean {
  try {
    const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
    const state = stat.slice(stat.lastIndexOf(")") + 2)[0];
    return state !== "Z" && state !== "X";
  } catch {
    return false;
  }
}

/** True when group `pgid` has no running member. */
export function groupGone(pgid: number): boolean {
  // Tests run with --allow-all, so /proc is readable here.
  return liveGroupMembers(pgid)!.length === 0;
}

/**
 * Waits until group `pgid` has no running member, up to `ms`; returns whether it emptied. For
 * members that got SIGKILL: it takes effect asynchronously, later still on a loaded machine.
 */
export async function waitGroupGone(pgid: number, ms = 500): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!groupGone(pgid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return groupGone(pgid);
}

/** Reads a pid written by a fixture, waiting up to `ms` for it to appear. */
export async function readPid(path: string, ms = 3000): Promise<number> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const text = await Deno.readTextFile(path).catch(() => "");
    if (/^\d+\s*$/.test(text)) return Number(text);
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`No pid in ${path}`);
}

/** Waits until `pid` is gone, up to `ms`; returns whether it went. */
export async function waitGone(pid: number, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return !alive(pid);
}

/** A fresh pid-file path in a temp dir. */
export async function pidFile(): Promise<string> {
  return join(await tempDir({ prefix: "tyhooks-pid-" }), "pid");
}

/**
 * bash, or undefined where there is none. Tests of children that leave their group need it:
 * dash refuses `set -m` without a terminal, bash makes each background job a group of its own.
 */
export const BASH: string | undefined = ["/bin/bash", "/usr/bin/bash"].find((path) => {
  try {
    return Deno.statSync(path).isFile;
  } catch {
    return false;
  }
});

/** Polls `check` every 20 ms until it is true or `ms` pass; returns its last value. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return await check();
}

/**
 * The text of `path` once it is written: by default once it holds anything, else once `ready`
 * says so (a whole JSON document, say). Polled as {@linkcode until} polls, for up to `ms`.
 */
export async function waitForFile(
  path: string,
  { ms = 5000, ready = (text: string) => text !== "" }: {
    ms?: number;
    ready?: (text: string) => boolean;
  } = {},
): Promise<string> {
  let text: string | null = null;
  const written = await until(async () => {
    text = await Deno.readTextFile(path).catch(() => null);
    return text !== null && ready(text);
  }, ms);
  if (!written) throw new Error(`${path} was not written within ${ms} ms`);
  return text!;
}

/** Whether `text` is one whole JSON document. */
export function isJson(text: string): boolean {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** Whether anything is at `path` (a symlink counts, wherever it leads). */
export function exists(path: string): Promise<boolean> {
  return Deno.lstat(path).then(() => true, () => false);
}

/** Lines of a file, or [] when it does not exist yet. */
export async function fileLines(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((l) => l !== "");
}
