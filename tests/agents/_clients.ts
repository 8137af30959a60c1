/**
 * Drives the real coding-agent clients (Claude Code, Gemini CLI, Codex; installed by `deno task
 * agent-clients`) through one prompt against the scripted model server, each run in a fresh HOME
 * and project dir, offline, with tyhooks from this checkout wired in as its hooks.
 */

import { join } from "node:path";
import {
  AGENT_CLIENTS,
  clientBin,
  type ClientName,
  clientsCache,
} from "../../.ci/agent_clients.ts";
import { terminateGroup } from "../../lib/process/group.ts";
import { exec, MAIN, PERMISSION_FLAGS, ROOT, shScript, tempDir, V8_FLAGS } from "../_cli.ts";
import { type ModelRequest, startModelServer, toolResults } from "./_model_server.ts";
import { spoolCounts } from "../../lib/spool/spool.ts";

export type { ClientName };

/** The clients by the names people know them by, for test names. */
export const CLIENT_LABELS: Record<ClientName, string> = {
  claude: `Claude Code ${AGENT_CLIENTS.claude.version}`,
  gemini: `Gemini CLI ${AGENT_CLIENTS.gemini.version}`,
  codex: `Codex ${AGENT_CLIENTS.codex.version}`,
};

/** The client's program, or why there is none (the test is then skipped, saying so). */
export function findClient(client: ClientName): { bin: string } | { missing: string } {
  const bin = clientBin(client);
  if (bin !== undefined) return { bin };
  const { package: pkg, version } = AGENT_CLIENTS[client];
  return { missing: `${pkg}@${version} is not in ${clientsCache()}: deno task agent-clients` };
}

/** One run's dirs, made fresh for it and removed after it. */
export interface RunDirs {
  /** The client's HOME. */
  home: string;
  /** The project the client works in. */
  project: string;
  /**
   * tyhooks from this checkout, by absolute path: a launcher that runs main.ts with everything it
   * needs in itself (clients hand hooks a trimmed environment).
   */
  tyhooks: string;
  /** The plugins dir tyhooks serves. */
  plugins: string;
}

/** The name each client gives its shell tool in hook payloads (Codex: `Bash`, as Claude Code). */
const SHELL_TOOLS: Record<ClientName, string> = {
  claude: "Bash",
  gemini: "run_shell_command",
  codex: "Bash",
};

/** The name the client gives its shell tool in hook payloads. */
export function shellTool(client: ClientName): string {
  return SHELL_TOOLS[client];
}

/**
 * Wires tyhooks into the project as a person does: `tyhooks agent install CLIENT --project DIR`,
 * run through the run's launcher, so every command it writes names that launcher.
 */
async function installInto(client: ClientName, dirs: RunDirs): Promise<void> {
  const out = await runTyhooks(dirs, ["agent", "install", client, "--project", dirs.project]);
  if (out.code !== 0) {
    throw new Error(`tyhooks agent install ${client} failed (exit ${out.code}): ${out.stderr}`);
  }
}

/** Runs `tyhooks <args>` (the run's launcher) in the project, as the run's user. */
function runTyhooks(dirs: RunDirs, args: string[]) {
  return exec([dirs.tyhooks, ...args], {
    cwd: dirs.project,
    env: { PATH: clientPath(), HOME: dirs.home, CODEX_HOME: join(dirs.home, ".codex") },
    clearEnv: true,
  });
}

/** What to run, and how. */
export interface ClientRunOptions {
  /** The plugins dir tyhooks serves. */
  plugins: string;
  /** The model's one shell command; none: the model only says "done". */
  shell?: string;
  /**
   * Codex: trust the hooks as a person does without a terminal (`app-server`: list them, record
   * each hash in config.toml), or run with `--dangerously-bypass-hook-trust` (`flag`, faster).
   */
  codexTrust?: "app-server" | "flag";
  /** Done while the client runs (e.g. kill tyhooks mid-decision). */
  during?: (dirs: RunDirs) => Promise<void>;
  /**
   * Done as the model server is about to answer a request of the conversation, with the number
   * of tool results it already holds (0: the model is about to ask for the shell command).
   */
  onTurn?: (turn: number, dirs: RunDirs) => Promise<void>;
  /** Done once the client has ended, before the run's dirs go (e.g. wait for a post hook). */
  after?: (dirs: RunDirs) => Promise<void>;
  /** The client is killed after this long; default 150 s. */
  timeoutMs?: number;
}

/** What a run did. */
export interface ClientRun {
  /** The files the project holds afterwards, dot files left out, sorted. */
  files: string[];
  /** What the model was told of each tool call, in the last request. */
  told: string[];
  /** Every model request. */
  requests: ModelRequest[];
  code: number;
  stdout: string;
  stderr: string;
  timedOut: boolean;
}

/**
 * Runs `bin` (the client) through one prompt in fresh dirs, with tyhooks wired in by `agent
 * install --project`; the dirs are removed afterwards.
 */
export async function runClient(
  client: ClientName,
  bin: string,
  options: ClientRunOptions,
): Promise<ClientRun> {
  const root = await Deno.realPath(await tempDir({ prefix: `tyhooks-${client}-` }));
  const state = join(root, "state");
  const dirs: RunDirs = {
    home: join(root, "home"),
    project: join(root, "project"),
    tyhooks: join(root, "bin", "tyhooks"),
    plugins: options.plugins,
  };
  const onTurn = options.onTurn;
  const model = startModelServer(options.shell === undefined ? [] : [{ shell: options.shell }], {
    onTurn: onTurn && ((turn) => onTurn(turn, dirs)),
  });
  try {
    await Deno.mkdir(join(dirs.home, "tmp"), { recursive: true });
    await Deno.mkdir(dirs.project);
    await writeLauncher(dirs.tyhooks, { plugins: dirs.plugins, state });
    await CLIENT_SETUP[client](dirs, model.url);
    await installInto(client, dirs);
    if (client === "codex" && options.codexTrust === "app-server") await trustCodexHooks(bin, dirs);
    const args = clientArgs(client, options.codexTrust !== "app-server");
    const run = spawnClient([bin, ...args], {
      cwd: dirs.project,
      env: clientEnv(client, dirs, model.url),
      timeoutMs: options.timeoutMs ?? 150_000,
    });
    // The client's run ends on its own (or its timer) even when `during` fails.
    const [result, during] = await Promise.allSettled([run, options.during?.(dirs)]);
    if (result.status === "rejected") throw result.reason;
    if (during.status === "rejected") throw during.reason;
    await options.after?.(dirs);
    const files = [];
    for await (const entry of Deno.readDir(dirs.project)) {
      if (!entry.name.startsWith(".")) files.push(entry.name);
    }
    return {
      ...result.value,
      files: files.sort(),
      told: toolResults(model.requests),
      requests: model.requests,
    };
  } finally {
    await model.close();
    // Notified events went to background runs of tyhooks: their state goes once they are done.
    await backgroundRunsDone(join(state, "state", "tyhooks", "spool"), 60_000);
    await Deno.remove(root, { recursive: true });
  }
}

/** Waits, up to `ms`, until the spool at `dir` holds nothing waiting or running. */
async function backgroundRunsDone(dir: string, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    const counts = await spoolCounts(dir).catch(() => undefined);
    if (counts !== undefined && counts.pending + counts.running === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The prompt: the model server decides what the model does. */
const PROMPT = "Run the command.";

function clientArgs(client: ClientName, bypassHookTrust: boolean): string[] {
  switch (client) {
    case "claude":
      return ["-p", PROMPT, "--output-format", "json", "--dangerously-skip-permissions"];
    case "gemini":
      // Without --yolo, -p offers the model no shell tool.
      return ["-p", PROMPT, "--yolo", "--output-format", "json"];
    case "codex":
      return [
        "exec",
        "--skip-git-repo-check",
        "--json",
        ...(bypassHookTrust ? ["--dangerously-bypass-hook-trust"] : []),
        PROMPT,
      ];
  }
}

function clientPath(): string {
  return Deno.env.get("PATH") ?? "/usr/bin:/bin";
}

/** Exactly the client's environment: PATH plus what sends it to the model server, offline. */
function clientEnv(client: ClientName, dirs: RunDirs, url: string): Record<string, string> {
  // TMPDIR in the run's dir: Claude Code keeps a folder per project under it, and the run's dir
  // is removed with the test's other temp dirs.
  const common = {
    PATH: clientPath(),
    HOME: dirs.home,
    TMPDIR: join(dirs.home, "tmp"),
    NO_COLOR: "1",
  };
  switch (client) {
    case "claude":
      return {
        ...common,
        ANTHROPIC_BASE_URL: url,
        ANTHROPIC_API_KEY: "scripted",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
        DISABLE_TELEMETRY: "1",
        DISABLE_AUTOUPDATER: "1",
        // As root, --dangerously-skip-permissions is refused outside a sandbox.
        IS_SANDBOX: "1",
      };
    case "gemini":
      return {
        ...common,
        GEMINI_API_KEY: "scripted",
        GOOGLE_GEMINI_BASE_URL: url,
        // -p in an untrusted folder ignores the project's settings, hooks included.
        GEMINI_CLI_TRUST_WORKSPACE: "true",
        // Skips the second Node process it starts for a bigger heap: a third faster.
        GEMINI_CLI_NO_RELAUNCH: "true",
      };
    case "codex":
      return { ...common, CODEX_HOME: join(dirs.home, ".codex") };
  }
}

/** The client's user settings: the model server as its model, nothing that phones home. */
const CLIENT_SETUP: Record<ClientName, (dirs: RunDirs, url: string) => Promise<void>> = {
  claude: async () => {},
  gemini: async (dirs) => {
    await Deno.mkdir(join(dirs.home, ".gemini"));
    const settings = {
      security: { auth: { selectedType: "gemini-api-key" } },
      privacy: { usageStatisticsEnabled: false },
      telemetry: { enabled: false },
      general: { disableAutoUpdate: true, disableUpdateNag: true },
    };
    await Deno.writeTextFile(join(dirs.home, ".gemini", "settings.json"), JSON.stringify(settings));
  },
  codex: async (dirs, url) => {
    await Deno.mkdir(join(dirs.home, ".codex"));
    // A model Codex knows (an unknown one loses tools); the project trusted, as its own hooks
    // file loads only in a trusted project.
    const config = [
      `model = "gpt-5.5"`,
      `model_provider = "scripted"`,
      `approval_policy = "never"`,
      `sandbox_mode = "danger-full-access"`,
      `check_for_update_on_startup = false`,
      ``,
      `[model_providers.scripted]`,
      `name = "scripted"`,
      `base_url = "${url}/v1"`,
      `wire_api = "responses"`,
      `request_max_retries = 0`,
      `stream_max_retries = 0`,
      ``,
      `[analytics]`,
      `enabled = false`,
      ``,
      `[projects.${JSON.stringify(dirs.project)}]`,
      `trust_level = "trusted"`,
    ];
    await Deno.writeTextFile(join(dirs.home, ".codex", "config.toml"), config.join("\n") + "\n");
  },
};

/**
 * A `tyhooks` that runs main.ts of this checkout. Everything it needs is in the script: Gemini
 * CLI gives hooks a trimmed environment, and a fresh HOME would mean a cold Deno cache.
 */
async function writeLauncher(path: string, options: { plugins: string; state: string }) {
  const quote = (value: string) => `'${value.replaceAll("'", `'\\''`)}'`;
  const deno = [
    Deno.execPath(),
    "run",
    "--quiet",
    "--config",
    join(ROOT, "deno.json"),
    ...PERMISSION_FLAGS,
    ...V8_FLAGS,
    MAIN,
  ];
  const script = shScript(
    `export DENO_DIR=${quote(Deno.env.get("DENO_DIR") ?? "")}`,
    `export TY_PLUGINS_DIR=${quote(options.plugins)}`,
    `export XDG_CACHE_HOME=${quote(join(options.state, "cache"))}`,
    `export XDG_STATE_HOME=${quote(join(options.state, "state"))}`,
    `export NO_COLOR=1`,
    // What tyhooks names itself by in the hook commands `agent install` writes.
    `export TYHOOKS_LAUNCHER=${quote(path)}`,
    `exec ${deno.map(quote).join(" ")} "$@"`,
  );
  await Deno.mkdir(join(path, ".."), { recursive: true });
  await Deno.writeTextFile(path, script);
  await Deno.chmod(path, 0o755);
}

/**
 * Trusts every hook Codex lists for the project, as its /hooks screen does: `codex app-server`
 * (JSON-RPC, one object a line) lists them with their hashes, and each hash is recorded as
 * `[hooks.state."KEY"] trusted_hash` in config.toml. A hook changed afterwards is untrusted again.
 */
async function trustCodexHooks(bin: string, dirs: RunDirs): Promise<void> {
  const child = new Deno.Command(bin, {
    args: ["app-server"],
    cwd: dirs.project,
    env: clientEnv("codex", dirs, ""),
    clearEnv: true,
    detached: true,
    stdin: "piped",
    stdout: "piped",
    stderr: "null",
  }).spawn();
  const timer = setTimeout(() => terminateGroup(child.pid), 60_000);
  const writer = child.stdin.getWriter();
  const send = (message: unknown) =>
    writer.write(new TextEncoder().encode(JSON.stringify(message) + "\n"));
  try {
    await send({
      id: 1,
      method: "initialize",
      params: { clientInfo: { name: "tests", version: "0" } },
    });
    await send({ method: "initialized" });
    await send({ id: 2, method: "hooks/list", params: { cwds: [dirs.project] } });
    let buffer = "";
    for await (const chunk of child.stdout.pipeThrough(new TextDecoderStream())) {
      buffer += chunk;
      const lines = buffer.split("\n");
      buffer = lines.pop()!;
      const listed = lines.map((line) => JSON.parse(line)).find((m) => m.id === 2);
      if (listed === undefined) continue;
      if (listed.error) {
        throw new Error(`codex app-server hooks/list: ${JSON.stringify(listed.error)}`);
      }
      const hooks: { key: string; currentHash: string }[] = listed.result.data
        .flatMap((entry: { hooks: unknown[] }) => entry.hooks);
      const state = hooks.map((h) =>
        `\n[hooks.state.${JSON.stringify(h.key)}]\ntrusted_hash = ${
          JSON.stringify(h.currentHash)
        }\n`
      );
      await Deno.writeTextFile(join(dirs.home, ".codex", "config.toml"), state.join(""), {
        append: true,
      });
      return;
    }
    throw new Error("codex app-server ended without listing the hooks");
  } finally {
    clearTimeout(timer);
    await terminateGroup(child.pid, { reaped: child.status });
    await writer.close().catch(() => {});
    await child.stdout.cancel().catch(() => {});
  }
}

/**
 * Runs the client in a process group of its own, killed with everything it started when it
 * outlives `timeoutMs`; whatever it left behind is ended too.
 */
async function spawnClient(
  command: string[],
  options: { cwd: string; env: Record<string, string>; timeoutMs: number },
): Promise<Pick<ClientRun, "code" | "stdout" | "stderr" | "timedOut">> {
  const child = new Deno.Command(command[0], {
    args: command.slice(1),
    cwd: options.cwd,
    env: options.env,
    clearEnv: true,
    detached: true,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    terminateGroup(child.pid, { reaped: child.status });
  }, options.timeoutMs);
  const stdout = new Response(child.stdout).text();
  const stderr = new Response(child.stderr).text();
  const status = await child.status;
  clearTimeout(timer);
  await terminateGroup(child.pid);
  return { code: status.code, stdout: await stdout, stderr: await stderr, timedOut };
}
