/**
 * Test helpers: run the CLI from source exactly as `deno task cli` does (the permission set in
 * deno.json, spelled as flags so Deno prints no "experimental" warning into stderr), run any other
 * command to its end, and make temp plugin dirs.
 *
 * `deno task test` runs four test files at once in one process: a test never changes
 * `Deno.env` or the cwd (run what reads them in a child: {@linkcode valueIn}), and never counts
 * processes it did not start.
 */

import { dirname, join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { RUN_FLAGS } from "../lib/process/detach.ts";

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
/** main.ts. */
export const MAIN = join(ROOT, "main.ts");

// Deno keeps its module and npm caches under $XDG_CACHE_HOME/deno unless DENO_DIR says otherwise.
// Tests give tyhooks a temp XDG_CACHE_HOME (for its index cache and detached log); pinning
// DENO_DIR keeps every child on the warm Deno cache instead of re-fetching npm packages.
if (Deno.env.get("DENO_DIR") === undefined) {
  const info = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  })
    .outputSync();
  Deno.env.set("DENO_DIR", JSON.parse(new TextDecoder().decode(info.stdout)).denoDir);
}

// The library's Runner and the daemon, run inside a test process, append their decisions to the
// decision log under the real <state>: off here. A CLI run gets it back (spawnCli), under a
// state dir of its own.
if (Deno.env.get("TYHOOKS_DECISION_LOG") === undefined) Deno.env.set("TYHOOKS_DECISION_LOG", "off");

/**
 * The binary's grants as `--allow-*` flags (deno.json's `tyhooks` permission set), as the
 * launcher `hosts sync` installs passes them: one reading of deno.json (lib/hosts/payload.ts).
 */
export const PERMISSION_FLAGS: string[] = RUN_FLAGS.filter((flag) => flag.startsWith("--allow-"));

/**
 * The binary's V8 flags (`--v8-flags=...`), read from the `compile` task so the tests run what
 * ships. A test checks that `deno task cli` uses the same.
 */
export const V8_FLAGS: string[] = RUN_FLAGS.filter((flag) => flag.startsWith("--v8-flags="));

/**
 * How Deno loads tyhooks from source (`--unstable-lazy-dynamic-imports`), as `deno task cli`, the
 * launcher and `agent install`'s commands run it.
 */
export const START_FLAGS: string[] = RUN_FLAGS.filter((flag) => flag.startsWith("--unstable-"));

/** Options of a test only root can set up (giving a file to another user): skipped for others. */
export const NEEDS_ROOT: { ignore: boolean } = { ignore: Deno.uid() !== 0 };

/** What a CLI run produced. */
export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@linkcode cli}. */
export interface CliOptions {
  env?: Record<string, string>;
  stdin?: string;
  cwd?: string;
  /** Extra flags for `deno run`, e.g. `--no-npm`. */
  denoFlags?: string[];
  /** Deno's debug log on stderr instead of `--quiet` (see {@linkcode SpawnCliOptions}). */
  debugLog?: boolean;
  /** A command that runs the CLI's argv (see {@linkcode SpawnCliOptions}). */
  wrap?: string[];
}

/** How {@linkcode spawnCli} wires the child. */
export interface SpawnCliOptions {
  env?: Record<string, string>;
  cwd?: string;
  /** Extra flags for `deno run`, e.g. `--no-npm`. */
  denoFlags?: string[];
  /** Deno's debug log on stderr instead of `--quiet`: it names every ES module Deno evaluates. */
  debugLog?: boolean;
  stdin?: "null" | "piped";
  stdout?: "null" | "piped";
  stderr?: "null" | "piped";
  /** A command that runs the CLI's argv, e.g. `["sh", "-c", 'ulimit -n 256 && exec "$@"', "sh"]`. */
  wrap?: string[];
  /** The entry file to run; default this tree's main.ts (a benchmark runs another checkout's). */
  main?: string;
}

// A run that names no cache home of its own would write into the real ~/.cache/tyhooks (its
// index cache, a background run's detached.log): it gets a temp one, and runs without the index
// cache unless its env says otherwise.
function noRealCache(env: Record<string, string> = {}): Record<string, string> {
  if (["XDG_CACHE_HOME", "HOME"].some((name) => name in env)) return {};
  const dir = Deno.makeTempDirSync({ prefix: "tyhooks-cache-" });
  trees.push(dir);
  return { XDG_CACHE_HOME: dir, TYHOOKS_NO_CACHE: "1" };
}

// A run that names no state home of its own would keep its spool (accepted events, --detach
// work) in the real ~/.local/state/tyhooks: it gets a temp one of its own instead.
function noRealState(env: Record<string, string> = {}): Record<string, string> {
  if (["XDG_STATE_HOME", "HOME"].some((name) => name in env)) return {};
  const dir = Deno.makeTempDirSync({ prefix: "tyhooks-state-" });
  trees.push(dir);
  return { XDG_STATE_HOME: dir };
}

/** Starts `tyhooks <args>` from source without waiting: for signal tests and long runs. */
export function spawnCli(args: string[], options: SpawnCliOptions = {}): Deno.ChildProcess {
  const [program, ...prefix] = [...(options.wrap ?? []), Deno.execPath()];
  return new Deno.Command(program, {
    args: [
      ...prefix,
      "run",
      options.debugLog ? "--log-level=debug" : "--quiet",
      ...(options.denoFlags ?? []),
      ...PERMISSION_FLAGS,
      ...START_FLAGS,
      ...V8_FLAGS,
      options.main ?? MAIN,
      ...args,
    ],
    env: {
      NO_COLOR: "1",
      TYHOOKS_DECISION_LOG: "",
      ...noRealCache(options.env),
      ...noRealState(options.env),
      ...options.env,
    },
    cwd: options.cwd,
    stdin: options.stdin ?? "null",
    stdout: options.stdout ?? "piped",
    stderr: options.stderr ?? "piped",
  }).spawn();
}

/** Runs `tyhooks <args>` from source and collects its output. */
export function cli(args: string[], options: CliOptions = {}): Promise<CliResult> {
  const stdin = options.stdin === undefined ? "null" : "piped";
  return outcome(spawnCli(args, { ...options, stdin }), options.stdin);
}

/** Options of {@linkcode exec}. */
export interface ExecOptions {
  cwd?: string;
  /** Added to this process's environment, or all of it with `clearEnv`. */
  env?: Record<string, string>;
  clearEnv?: boolean;
  /** Written to the command's stdin, then closed; default: no stdin. */
  stdin?: string;
}

/** Runs `cmd` (a program and its arguments) to its end and collects its output. */
export function exec(cmd: string[], options: ExecOptions = {}): Promise<CliResult> {
  const child = new Deno.Command(cmd[0], {
    args: cmd.slice(1),
    env: options.env,
    clearEnv: options.clearEnv,
    cwd: options.cwd,
    stdin: options.stdin === undefined ? "null" : "piped",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  return outcome(child, options.stdin);
}

// Writes `stdin` (if any) to a child started with piped streams, and collects what it printed.
async function outcome(child: Deno.ChildProcess, stdin?: string): Promise<CliResult> {
  if (stdin !== undefined) {
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  }
  const out = await child.output();
  const decoder = new TextDecoder();
  return { code: out.code, stdout: decoder.decode(out.stdout), stderr: decoder.decode(out.stderr) };
}

/**
 * Wall time of `tyhooks <args>`, a run with nothing to wait for: Deno's start and tyhooks'
 * loading. SPEC's bounds (timeout + 1 s) are tyhooks' own time; a run timed from outside pays this
 * too, which a busy machine (tests run four files at once) stretches by seconds. So timing tests
 * measure it just before and allow it on top of the bound.
 */
export async function startupMs(args: string[], options: CliOptions = {}): Promise<number> {
  const started = performance.now();
  const r = await cli(args, options);
  if (r.code !== 0) throw new Error(`tyhooks ${args.join(" ")} failed: ${r.stderr}`);
  return performance.now() - started;
}

/**
 * Wall time of a pick-host run that probes nothing (a hosts file with no host): what to allow on
 * top of SPEC's `--timeout` + 1 s when timing pick-host from outside.
 */
export async function pickHostStartupMs(env: Record<string, string> = {}): Promise<number> {
  const hosts = join(await tempDir({ prefix: "tyhooks-empty-hosts-" }), "hosts");
  await Deno.writeTextFile(hosts, "# no host\n");
  return startupMs(["pick-host", "--hosts", hosts], { env });
}

/** The keys of a run record (SPEC "Machine-readable output"), sorted. */
export const RUN_KEYS: readonly string[] = [
  "duration_ms",
  "error",
  "exit_code",
  "pid",
  "plugin",
  "script",
  "signal",
  "stderr_bytes",
  "stderr_truncated",
  "stdout_bytes",
  "stdout_truncated",
  "timed_out",
];

/** Temp dirs and files made by {@linkcode tempDir}, {@linkcode tempFile} and {@linkcode makeTree}, removed when the test process ends. */
const trees: string[] = [];
globalThis.addEventListener("unload", () => {
  for (const dir of trees) {
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch {
      // A test made it unremovable on purpose (mode 000, another owner): left for the OS.
    }
  }
});

/** `Deno.makeTempDir`, the dir removed when the test process ends: tests leave no temp dir. */
export async function tempDir(options?: Deno.MakeTempOptions): Promise<string> {
  const dir = await Deno.makeTempDir(options);
  trees.push(dir);
  return dir;
}

/** `Deno.makeTempFile`, the file removed when the test process ends. */
export async function tempFile(options?: Deno.MakeTempOptions): Promise<string> {
  const file = await Deno.makeTempFile(options);
  trees.push(file);
  return file;
}

/** A /bin/sh script of `lines`, one a line: {@linkcode makeTree} makes it executable. */
export function shScript(...lines: string[]): string {
  return ["#!/bin/sh", ...lines, ""].join("\n");
}

/** A script that does nothing and exits 0: a hook or action whose only job is to be there. */
export const NOOP_SCRIPT = "#!/bin/sh\nexit 0\n";

/** Writes `files` (path -> content; content starting with "#!" is made executable) under a new temp dir. */
export async function makeTree(files: Record<string, string>): Promise<string> {
  const dir = await tempDir({ prefix: "tyhooks-test-" });
  await writeTree(dir, files);
  return dir;
}

/** Runs `fn` on a tree of `files` (see {@linkcode makeTree}), removed as soon as it ends. */
export async function withTree(
  files: Record<string, string>,
  fn: (dir: string) => Promise<void>,
): Promise<void> {
  const dir = await makeTree(files);
  try {
    await fn(dir);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

/** Writes `files` under `dir` (see {@linkcode makeTree}). */
export async function writeTree(dir: string, files: Record<string, string>): Promise<void> {
  for (const [path, content] of Object.entries(files)) {
    const full = join(dir, path);
    await Deno.mkdir(dirname(full), { recursive: true });
    await Deno.writeTextFile(full, content);
    if (content.startsWith("#!")) await Deno.chmod(full, 0o755);
  }
}

/** What {@linkcode valueIn} gives its child: variables added to this process's, and a cwd. */
export interface ChildOptions {
  env?: Record<string, string>;
  cwd?: string;
}

/**
 * The JSON value of `expression`, evaluated in a child Deno that imports `imports` (name ->
 * module path under the repository root). For code that reads the environment or the working
 * directory: test modules run in parallel in one process, so none may change its own.
 */
export async function valueIn(
  imports: Record<string, string>,
  expression: string,
  options: ChildOptions = {},
): Promise<unknown> {
  const lines = Object.entries(imports).map(([name, path]) =>
    `import { ${name} } from ${JSON.stringify(pathToFileURL(join(ROOT, path)).href)};`
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      "--quiet",
      "--config",
      join(ROOT, "deno.json"),
      `${lines.join("\n")}\nconsole.log(JSON.stringify(await (${expression})));`,
    ],
    env: options.env,
    cwd: options.cwd,
    stdout: "piped",
    stderr: "piped",
  }).output();
  const decoder = new TextDecoder();
  if (out.code !== 0) throw new Error(`${expression}: ${decoder.decode(out.stderr)}`);
  return JSON.parse(decoder.decode(out.stdout));
}
