/**
 * The command table. Each entry loads its file only when chosen, so `--help` and `--version`
 * stay cheap and a command pays only for what it uses. Command files never import this file:
 * what they share is in `types.ts`.
 *
 * @module
 */

import type { CommandEntry } from "./types.ts";

const TASK = `--task-json '{"id":42,"title":"Fix login"}'`;

/** Every command, in the order `tyhooks --help` lists them. */
export const COMMANDS: CommandEntry[] = [
  {
    name: "plugins list",
    aliases: ["plugins ls", "plugins"],
    summary: "list plugins, what each handles, and the warnings",
    examples: ["tyhooks plugins", "tyhooks plugins list --json"],
    load: () => import("./plugins_list.ts"),
  },
  {
    name: "plugins validate",
    summary: "strict lint of the plugins dir, or of each PATH; exit 1 on any problem",
    examples: [
      "tyhooks plugins validate",
      "tyhooks plugins validate ./my-plugin --json",
    ],
    load: () => import("./plugins_validate.ts"),
  },
  {
    name: "plugins new",
    summary: "scaffold a plugin: manifest with schema modeline, script stubs, README",
    examples: [
      "tyhooks plugins new my-notifier",
      "tyhooks plugins new guard --hooks pre_tool_call --actions sync --dir .",
    ],
    load: async () => (await import("./plugins_authoring.ts")).create,
  },
  {
    name: "plugins dir",
    summary: "print the plugins dir",
    examples: ["tyhooks plugins dir", 'cd "$(tyhooks plugins dir)"'],
    load: async () => (await import("./plugins_authoring.ts")).dir,
  },
  {
    name: "plugins schema",
    summary: "print the JSON Schema of plugin.yaml",
    examples: ["tyhooks plugins schema > plugin.schema.json"],
    jsonOutput: true,
    load: async () => (await import("./plugins_authoring.ts")).schema,
  },
  {
    name: "plugins add",
    summary: "install a plugin or collection from git or a local dir",
    examples: [
      "tyhooks plugins add taskyou/plugins",
      "tyhooks plugins add https://github.com/owner/ty-notify.git --ref v1.2.0",
      "tyhooks plugins add ./my-plugin --name notify",
    ],
    load: async () => (await import("./plugins_install.ts")).add,
  },
  {
    name: "plugins update",
    summary: "fetch installs again from their source; broken updates roll back",
    examples: ["tyhooks plugins update", "tyhooks plugins update ty-notify"],
    load: async () => (await import("./plugins_install.ts")).update,
  },
  {
    name: "plugins remove",
    aliases: ["plugins rm", "plugins uninstall"],
    summary: "remove a plugin or an install folder",
    examples: ["tyhooks plugins remove notify", "tyhooks plugins rm plugins"],
    load: async () => (await import("./plugins_install.ts")).remove,
  },
  {
    name: "plugins run",
    summary: "run a plugin action and exit with its exit code",
    examples: ["tyhooks plugins run sync push", `tyhooks plugins run sync push ${TASK}`],
    load: () => import("./plugins_run.ts"),
  },
  {
    name: "fire",
    summary: "run the hooks of an event",
    examples: [
      `tyhooks fire task.done ${TASK}`,
      "tyhooks fire task.done --plugin notify --show-output",
      "tyhooks fire task.failed --task task.json --message 'tests fail' --detach",
    ],
    load: async () => (await import("./fire.ts")).fire,
  },
  {
    name: "status-change",
    summary: "map a task status to an event and fire it",
    examples: [
      `tyhooks status-change done ${TASK}`,
      "tyhooks status-change blocked --task task.json --message 'build error'",
    ],
    load: async () => (await import("./fire.ts")).statusChange,
  },
  {
    name: "route",
    summary: "ask task.route handlers which profile a task runs under",
    examples: [`tyhooks route ${TASK}`, "tyhooks route --task task.json --json"],
    load: async () => (await import("./runner.ts")).route,
  },
  {
    name: "place",
    summary: "ask task.placement handlers on which host a task runs",
    examples: [`tyhooks place ${TASK}`, "tyhooks place --task task.json --remote-required"],
    jsonOutput: true,
    load: async () => (await import("./runner.ts")).place,
  },
  {
    name: "hosts",
    summary: "ask task.hosts handlers where a task could run",
    examples: [`tyhooks hosts ${TASK}`, "tyhooks hosts --task task.json --sequential"],
    jsonOutput: true,
    load: async () => (await import("./runner.ts")).hosts,
  },
  {
    name: "tool pre",
    summary: "ask pre_tool_call hooks whether a tool call is allowed",
    examples: [
      `tyhooks tool pre --tool bash --args '{"command":"rm -rf /"}'`,
      "tyhooks tool pre --claude   # as a Claude Code PreToolUse hook",
      `echo '{"tool":"bash","args":{}}' | tyhooks tool pre --request -`,
    ],
    jsonOutput: true,
    load: async () => (await import("./tool.ts")).pre,
  },
  {
    name: "tool post",
    summary: "tell post_tool_call hooks about a finished tool call",
    examples: [
      `tyhooks tool post --tool bash --args '{"command":"ls"}' --result 'a b c'`,
      'tyhooks tool post --tool bash --error "-bash: x: command not found"',
      "tyhooks tool post --claude   # as a Claude Code PostToolUse hook",
    ],
    load: async () => (await import("./tool.ts")).post,
  },
  {
    name: "agent",
    summary: "be a coding agent's hook command (claude, gemini, codex, cursor) for every event",
    examples: [
      "tyhooks agent claude   # every Claude Code hook: the hook JSON on stdin",
      "tyhooks agent gemini --deadline 25s",
    ],
    takesArguments: true,
    load: async () => (await import("./agent.ts")).agent,
  },
  {
    name: "agent install",
    summary: "wire tyhooks into a coding agent's hook settings (every event, fail-closed)",
    examples: [
      "tyhooks agent install claude",
      "tyhooks agent install gemini --project .",
      "tyhooks agent install codex --dry-run",
    ],
    load: async () => (await import("./agent_install.ts")).install,
  },
  {
    name: "agent uninstall",
    summary: "take tyhooks' entries out of a coding agent's hook settings",
    examples: ["tyhooks agent uninstall claude", "tyhooks agent uninstall cursor --project ."],
    load: async () => (await import("./agent_install.ts")).uninstall,
  },
  {
    name: "services run",
    summary: "supervise every plugin service until SIGINT/SIGQUIT/SIGTERM",
    examples: [
      "tyhooks services run",
      "tyhooks services run --env TY_API_URL=http://127.0.0.1:7000",
    ],
    load: async () => (await import("./services.ts")).supervise,
  },
  {
    name: "services list",
    aliases: ["services ls", "services"],
    summary: "list the services that would run",
    examples: ["tyhooks services list", "tyhooks services list --json"],
    load: async () => (await import("./services.ts")).list,
  },
  {
    name: "log",
    summary: "print the decision log: every route, placement, hosts and tool pre decision",
    examples: [
      "tyhooks log -n 20",
      "tyhooks log --follow --event pre_tool_call --decision block",
      "tyhooks log --since 1h --json",
    ],
    load: () => import("./log.ts"),
  },
  {
    name: "serve",
    summary: "run the daemon: answer over HTTP on a unix socket or TCP",
    examples: ["tyhooks serve", "tyhooks serve --listen 127.0.0.1:7070 --services"],
    load: () => import("./serve.ts"),
  },
  {
    name: "spool list",
    aliases: ["spool ls", "spool"],
    summary: "list the accepted events not yet run (left by a stopped daemon or a dead --detach)",
    examples: ["tyhooks spool", "tyhooks spool list --json"],
    load: async () => (await import("./spool.ts")).list,
  },
  {
    name: "spool run",
    summary: "run the waiting spooled events now, in the order they were accepted",
    examples: ["tyhooks spool run", "tyhooks spool run --json"],
    load: async () => (await import("./spool.ts")).run,
  },
  {
    name: "probe",
    summary: "print this host's facts as JSON",
    examples: ["tyhooks probe", "tyhooks probe --workdir /srv/work"],
    jsonOutput: true,
    load: async () => (await import("./hosts.ts")).probe,
  },
  {
    name: "pick-host",
    summary: "probe hosts and print a placement answer",
    examples: [
      "tyhooks pick-host --hosts ~/.config/tyhooks/hosts",
      "tyhooks pick-host --hosts hosts --strategy least-loaded",
    ],
    jsonOutput: true,
    load: async () => (await import("./hosts.ts")).pickHost,
  },
  {
    name: "hosts sync",
    summary: "put tyhooks (and the plugins) on agent hosts over ssh",
    examples: [
      "tyhooks hosts sync gpu-1 gpu-2",
      "tyhooks hosts sync --plugins gpu-1",
      'TYHOOKS_SSH="ssh -F ~/.ssh/fleet_config" tyhooks hosts sync gpu-1',
    ],
    load: async () => (await import("./hosts.ts")).sync,
  },
  {
    name: "doctor",
    summary: "check the setup, one line per check with the fix; exit 1 when one fails",
    examples: ["tyhooks doctor", "tyhooks doctor --json"],
    load: () => import("./doctor.ts"),
  },
];
