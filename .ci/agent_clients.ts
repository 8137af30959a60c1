/**
 * `deno task agent-clients`: installs the coding-agent clients that tests/agents/ drive, at pinned
 * versions, from the npm registry into a cache outside the repository (one npm prefix each,
 * `<cache>/<package>@<version>`), reusing an install already there. The tests find them in the
 * same place and skip a client that is missing, so CI runs on without them.
 *
 * The cache is `$TYHOOKS_AGENT_CLIENTS`, else `${XDG_CACHE_HOME:-$HOME/.cache}/tyhooks-agent-clients`.
 * Exit 0 when every client is there, 1 when one could not be installed (the reason on stderr).
 */

import { join } from "node:path";

/** A client the tests drive: its npm package, the pinned version, the program it installs. */
export interface AgentClient {
  package: string;
  version: string;
  bin: string;
}

/** Pinned: the versions whose hook contracts the tests were written against. */
export const AGENT_CLIENTS = {
  claude: { package: "@anthropic-ai/claude-code", version: "2.1.332", bin: "claude" },
  gemini: { package: "@google/gemini-cli", version: "0.61.0", bin: "gemini" },
  codex: { package: "@openai/codex", version: "0.171.0", bin: "codex" },
} as const satisfies Record<string, AgentClient>;

/** A client's name: `claude`, `gemini` or `codex`. */
export type ClientName = keyof typeof AGENT_CLIENTS;

/** Where the clients are installed (see the module's doc). */
export function clientsCache(env: (name: string) => string | undefined = Deno.env.get): string {
  const explicit = env("TYHOOKS_AGENT_CLIENTS");
  if (explicit) return explicit;
  const cache = env("XDG_CACHE_HOME") || join(env("HOME") ?? "/", ".cache");
  return join(cache, "tyhooks-agent-clients");
}

/** The npm prefix of one client. */
export function clientDir(name: ClientName, cache: string = clientsCache()): string {
  const { package: pkg, version } = AGENT_CLIENTS[name];
  return join(cache, `${pkg}@${version}`);
}

/** The client's program, or undefined when it is not installed. */
export function clientBin(name: ClientName, cache: string = clientsCache()): string | undefined {
  const bin = join(clientDir(name, cache), "node_modules", ".bin", AGENT_CLIENTS[name].bin);
  try {
    return Deno.statSync(bin).isFile ? bin : undefined;
  } catch {
    return undefined;
  }
}

/** An npm install that takes longer than this is given up (a slow mirror must not eat CI's time). */
const INSTALL_LIMIT_MS = 240_000;

async function npm(args: string[], signal?: AbortSignal) {
  const out = await new Deno.Command("npm", {
    args,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", npm_config_update_notifier: "false" },
    signal,
  }).output();
  const text = new TextDecoder();
  return { code: out.code, output: text.decode(out.stdout) + text.decode(out.stderr) };
}

/** Why the registry cannot be used, or null when it answers. */
async function registryProblem(): Promise<string | null> {
  let registry = "https://registry.npmjs.org/";
  try {
    const got = await npm(["config", "get", "registry"]);
    if (got.code === 0 && got.output.trim()) registry = got.output.trim().split("\n").at(-1)!;
  } catch (error) {
    return `npm cannot be run (${(error as Error).message}) (hint: install Node.js and npm)`;
  }
  try {
    const url = new URL("-/ping", registry.endsWith("/") ? registry : `${registry}/`);
    const response = await fetch(url, { signal: AbortSignal.timeout(20_000) });
    await response.body?.cancel();
    return null;
  } catch (error) {
    return `the npm registry "${registry}" cannot be reached (${(error as Error).message})`;
  }
}

/**
 * Installs one client into a temp prefix beside its final place, renamed there when complete, so
 * that an interrupted install is never mistaken for one to reuse.
 */
async function install(name: ClientName, cache: string): Promise<string> {
  const { package: pkg, version } = AGENT_CLIENTS[name];
  const dir = clientDir(name, cache);
  if (clientBin(name, cache)) return `${pkg}@${version}: reused ${dir}`;
  const started = performance.now();
  await Deno.mkdir(join(dir, ".."), { recursive: true });
  const partial = `${dir}.partial-${Deno.pid}`;
  try {
    const run = await npm(
      ["install", "--prefix", partial, "--no-audit", "--no-fund", "--no-save", `${pkg}@${version}`],
      AbortSignal.timeout(INSTALL_LIMIT_MS),
    ).catch((error: Error) => ({ code: -1, output: error.message }));
    if (run.code !== 0) {
      // npm's last words, without its blank "npm error 404" lines.
      const lines = run.output.trim().split("\n").filter((line) =>
        !/^npm error( \d+)?\s*$/.test(line)
      );
      const tail = lines.slice(-5).join("\n  ");
      throw new Error(`Cannot install "${pkg}@${version}": npm install failed:\n  ${tail}`);
    }
    await Deno.rename(partial, dir);
  } finally {
    await Deno.remove(partial, { recursive: true }).catch(() => {});
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  return `${pkg}@${version}: installed in ${seconds} s into ${dir}`;
}

if (import.meta.main) {
  const cache = clientsCache();
  const names = Object.keys(AGENT_CLIENTS) as ClientName[];
  const problem = names.every((name) => clientBin(name, cache)) ? null : await registryProblem();
  if (problem !== null) {
    console.error(`deno task agent-clients: Cannot install the agent clients: ${problem}`);
    Deno.exit(1);
  }
  // All at once: mostly downloads (38 s at once, 86 s one after another, measured cold).
  const results = await Promise.allSettled(names.map((name) => install(name, cache)));
  for (const result of results) {
    if (result.status === "fulfilled") console.error(result.value);
    else console.error(`deno task agent-clients: ${(result.reason as Error).message}`);
  }
  const failed = results.some((result) => result.status === "rejected");
  Deno.exit(failed ? 1 : 0);
}
