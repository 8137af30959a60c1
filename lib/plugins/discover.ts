/**
 * Finding the plugin dirs below a plugins dir as ty does: a folder holding `plugin.yaml` is a
 * plugin, one without a collection searched down to {@linkcode MAX_DEPTH} levels (ty's
 * `maxPluginDepth` of 4 from 0). Bounded whatever the tree holds: symlinked folders are followed
 * (a tyhooks extension) but each real dir once, so a link back up is a dead end. Real paths are
 * claimed level by level in path order, so which of two links to one folder counts is not timing's.
 *
 * @module
 */

import { join, relative } from "../paths.ts";
import type { FoundDir, LoadWarning, Observe } from "./types.ts";
import { quoted } from "../text.ts";

/** The deepest level searched: the plugins dir's own children are depth 1. */
export const MAX_DEPTH = 5;

/** The most directories one walk lists; past it the walk stops with a warning. */
export const MAX_DIRS = 10_000;
/** How the warning of a walk cut at {@linkcode MAX_DIRS} begins (its path: the dir walked). */
export const SEARCH_CUT = "Stopped searching the plugins dir after";

/** Options of {@linkcode discoverPluginDirs}. */
export interface DiscoverOptions {
  /** Stops the walk: it then rejects with the signal's reason. */
  signal?: AbortSignal;
  /** When the walk gives up, on the `performance.now()` clock, throwing a `TimeoutError`. */
  deadline?: number;
  observe?: Observe;
}

/** What discovery found. */
export interface Discovery {
  /** The plugin dirs, sorted by path. */
  dirs: FoundDir[];
  /** Folders that could not be read, and a walk cut short. */
  warnings: LoadWarning[];
}

/** Finds every plugin dir under `root`, absolute; a missing `root` holds no plugins. */
export function discoverPluginDirs(root: string, options: DiscoverOptions = {}): Discovery {
  const walk = new Walk(root, options);
  let level = walk.start();
  for (let depth = 1; depth <= MAX_DEPTH && level.length > 0; depth++) {
    level = walk.claim(walk.list(level, depth), depth);
  }
  return walk.result();
}

interface Walked {
  path: string;
  real: string;
  linked: boolean;
}

// `real` is null for what is not a directory; a plugin dir has its stats.
type Candidate = Omit<Walked, "real"> & {
  real: string | null;
  info?: Deno.FileInfo;
  manifest?: Deno.FileInfo;
};

// One walk's state. Synchronous calls: one lstat or realpath costs microseconds, an async one a
// trip through Deno's thread pool (1,000 plugins: several times the whole walk).
class Walk {
  #root: string;
  #options: DiscoverOptions;
  #dirs: FoundDir[] = [];
  #warnings: LoadWarning[] = [];
  #visited = new Set<string>();
  #listed = 0;
  #cut = false;

  constructor(root: string, options: DiscoverOptions) {
    this.#root = root;
    this.#options = options;
  }

  /** The first level: the plugins dir, or nothing when it is a link leading nowhere. */
  start(): Walked[] {
    const root = this.#root;
    this.#stopIfDue();
    this.#options.observe?.(root);
    let real: string | null = null;
    try {
      if (Deno.statSync(root).isDirectory) real = Deno.realPathSync(root);
    } catch (error) {
      // A missing plugins dir holds no plugins, but one that is a link leading nowhere is not
      // missing; an unreadable one is reported when listed.
      const nowhere = leadsNowhere(root, error);
      if (nowhere !== null) {
        this.#cannotRead(root, nowhere);
        return [];
      }
    }
    if (real !== null) this.#visited.add(real);
    return [{ path: root, real: real ?? root, linked: false }];
  }

  /** Lists the dirs of one level (at most {@linkcode MAX_DIRS} in all) and looks at each entry. */
  list(level: Walked[], depth: number): Candidate[] {
    if (level.length > MAX_DIRS - this.#listed) {
      level = level.slice(0, MAX_DIRS - this.#listed);
      this.#cut = true;
    }
    this.#listed += level.length;
    const listings = level.map((dir) => {
      this.#stopIfDue();
      let entries: Deno.DirEntry[];
      this.#options.observe?.(dir.path);
      try {
        entries = [...Deno.readDirSync(dir.path)];
      } catch (error) {
        if (depth === 1 && error instanceof Deno.errors.NotFound) return [];
        this.#cannotRead(dir.path, (error as Error).message);
        return [];
      }
      return entries.filter((e) => e.name !== ".git" && (e.isDirectory || e.isSymlink))
        .sort((a, b) => byBytes(a.name, b.name)).map((entry) => this.#inspect(dir, entry));
    });
    this.#stopIfDue();
    return listings.flat();
  }

  /** Claims each candidate's real path (the first path to it counts): a plugin, or a collection. */
  claim(candidates: Candidate[], depth: number): Walked[] {
    const next: Walked[] = [];
    for (const candidate of candidates.sort((a, b) => byPath(a.path, b.path))) {
      const { path, real, linked, info, manifest } = candidate;
      if (real === null || this.#visited.has(real)) continue;
      this.#visited.add(real);
      if (manifest !== undefined) this.#dirs.push({ path, real, linked, info: info!, manifest });
      else if (depth < MAX_DEPTH) next.push({ path, real, linked });
    }
    return next;
  }

  /** The plugin dirs in path order, and the warnings. */
  result(): Discovery {
    const root = this.#root;
    if (this.#cut) {
      const message = `${SEARCH_CUT} ${MAX_DIRS} directories`;
      this.#warnings.push({ plugin: null, path: root, line: null, column: null, message });
    }
    const start = root.endsWith("/") ? root.length : root.length + 1;
    this.#dirs.sort((a, b) => byPath(a.path.slice(start), b.path.slice(start)));
    return { dirs: this.#dirs, warnings: this.#warnings };
  }

  // One entry of a listed dir: a plugin dir (with its stats), a collection, or nothing. A folder
  // that is no link is its parent's real path and its name: only links are resolved.
  #inspect(parent: Walked, entry: Deno.DirEntry): Candidate {
    const path = join(parent.path, entry.name);
    const linked = parent.linked || entry.isSymlink;
    this.#options.observe?.(path);
    let real = join(parent.real, entry.name);
    try {
      if (entry.isSymlink) {
        if (!Deno.statSync(path).isDirectory) return { path, real: null, linked };
        real = Deno.realPathSync(path);
      }
    } catch (error) {
      if (isEditorLock(entry.name, path)) return { path, real: null, linked };
      // A link that leads nowhere (an unmounted disk, a plugin not cloned yet) was meant to hold
      // something: named too.
      const nowhere = leadsNowhere(path, error);
      if (nowhere === null) return this.#unreadable({ path, real: null, linked }, error);
      this.#cannotRead(path, nowhere);
      return { path, real: null, linked };
    }
    const manifest = join(path, "plugin.yaml");
    // lstat: a plugin.yaml that is a dangling link or a folder still makes this a plugin dir,
    // and the loader then says what is wrong with it.
    this.#options.observe?.(manifest);
    let manifestInfo: Deno.FileInfo;
    try {
      manifestInfo = Deno.lstatSync(manifest);
    } catch (error) {
      // None: a collection, listed next (a folder that cannot be listed is named then).
      if (error instanceof Deno.errors.NotFound) return { path, real, linked };
      return this.#unreadable({ path, real: null, linked }, error);
    }
    try {
      return { path, real, linked, manifest: manifestInfo, info: Deno.statSync(path) };
    } catch (error) {
      return this.#unreadable({ path, real: null, linked }, error);
    }
  }

  // A folder that cannot be looked into may hold a plugin (a guard, say): it is named, never
  // passed over in silence. One gone since it was listed holds nothing.
  #unreadable(candidate: Candidate, error: unknown): Candidate {
    if (!(error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory)) {
      this.#cannotRead(candidate.path, (error as Error).message);
    }
    return candidate;
  }

  #cannotRead(path: string, why: string): void {
    const what = path === this.#root ? "the plugins dir" : quoted(relative(this.#root, path));
    const message = `Cannot read ${what}: ${why}`;
    this.#warnings.push({ plugin: null, path, line: null, column: null, message });
  }

  #stopIfDue(): void {
    const { signal, deadline } = this.#options;
    signal?.throwIfAborted();
    if (deadline !== undefined && performance.now() > deadline) {
      throw new DOMException("The plugins dir was not searched in time", "TimeoutError");
    }
  }
}

// Emacs marks a file it edits with a link `.#FILE` -> `user@host.PID:BOOT` beside it, which leads
// nowhere by design: never a plugin, and no reason to stop trusting the guards while it lasts.
function isEditorLock(name: string, path: string): boolean {
  if (!name.startsWith(".#")) return false;
  try {
    return /^[^/]*@[^/]*\.\d+(?::\d+)?$/.test(Deno.readLinkSync(path));
  } catch {
    return false;
  }
}

// Why `path`, whose stat failed with `error`, is a symlink that leads nowhere; null when it is
// no symlink (or is gone), or the failure is another one.
function leadsNowhere(path: string, error: unknown): string | null {
  const loop = error instanceof Deno.errors.FilesystemLoop;
  const gone = error instanceof Deno.errors.NotFound || error instanceof Deno.errors.NotADirectory;
  if (!loop && !gone) return null;
  let target: string;
  try {
    target = Deno.readLinkSync(path);
  } catch {
    return null;
  }
  const why = loop ? "is a loop of links" : "leads nowhere";
  return `it is a link to ${quoted(target)}, which ${why}`;
}

/**
 * Compares strings as Go does, in code point order; JS's `<` compares UTF-16 code units, which
 * differs where a surrogate pair meets a character from U+E000 to U+FFFF.
 */
export function byBytes(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return rank(x) - rank(y);
  }
  return a.length - b.length;
}

/**
 * Compares relative paths folder by folder, so `a/z` comes before `a-b` and a collection's
 * plugins stay together: as {@linkcode byBytes}, with `/` below every other character.
 */
export function byPath(a: string, b: string): number {
  for (let i = 0; i < a.length && i < b.length; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x !== y) return (x === SLASH ? -1 : rank(x)) - (y === SLASH ? -1 : rank(y));
  }
  return a.length - b.length;
}

const SLASH = 0x2f;

// A code unit's place in code point order: surrogates (halves of characters above U+FFFF) after
// every other code unit, in their own order.
function rank(unit: number): number {
  return unit >= 0xd800 && unit <= 0xdfff ? unit + 0x2800 : unit;
}
