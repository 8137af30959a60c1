/**
 * Records every path the loader looks at, with its signature taken at that moment, so the index
 * cache can tell later whether anything it depended on changed. The signature is taken before
 * the loader reads the path: a change made while a cold load runs then invalidates the entry it
 * writes, instead of hiding behind a signature of the new state. Recording happens only inside
 * {@linkcode observing}; elsewhere it costs one lookup.
 *
 * @module
 */

import type { AsyncLocalStorage } from "node:async_hooks";

// Made by the first cold load: node:async_hooks makes Deno evaluate about 17 of its Node
// modules, which a warm call (the cache checked, nothing observed) never needs.
let store: AsyncLocalStorage<Map<string, string>> | undefined;
let making: Promise<void> | undefined; // One store for loads that start together.

/** Notes that the loader's result depends on `path` (present or missing), before reading it. */
export function observe(path: string): void {
  const paths = store?.getStore();
  if (paths !== undefined && !paths.has(path)) paths.set(path, signature(path));
}

/**
 * Runs `fn`, collecting every path observed while it runs (including in its async work), each
 * with its signature from before it was read.
 */
export async function observing<T>(
  fn: () => Promise<T>,
): Promise<{ result: T; paths: Map<string, string> }> {
  making ??= import("node:async_hooks").then((m) => void (store = new m.AsyncLocalStorage()));
  await making;
  const paths = new Map<string, string>();
  const result = await store!.run(paths, fn);
  return { result, paths };
}

/**
 * What a path looks like now: mtime, ctime, inode, size and mode of the entry itself and, for a
 * symlink, of its target; "" when nothing is there. A directory's signature changes when an
 * entry is added or removed, a file's when it is written, chmod-ed or replaced.
 */
export function signature(path: string): string {
  try {
    const link = Deno.lstatSync(path);
    const sig = stamp(link);
    return link.isSymlink ? `${sig}>${targetStamp(path)}` : sig;
  } catch {
    return "";
  }
}

/**
 * The mode (file type and permission bits) of what `sig`, a {@linkcode signature}, describes:
 * the entry itself, or a symlink's target; null for a missing path or a dangling link.
 */
export function modeOf(sig: string): number | null {
  const target = sig.slice(sig.lastIndexOf(">") + 1);
  if (target === "") return null;
  const mode = Number(target.slice(target.lastIndexOf(":") + 1));
  return Number.isInteger(mode) ? mode : null;
}

// A dangling link is still a link: "" is kept for a path where nothing is.
function targetStamp(path: string): string {
  try {
    return stamp(Deno.statSync(path));
  } catch {
    return "";
  }
}

function stamp(info: Deno.FileInfo): string {
  return `${info.mtime?.getTime()}:${info.ctime?.getTime()}:${info.ino}:${info.size}:${info.mode}`;
}
