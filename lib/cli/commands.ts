/**
 * The command table. Each entry loads its file only when chosen, so `--help` and `--version`
 * stay cheap and a command pays only for what it uses.
 *
 * @module
 */

import type { CommandModule } from "./command.ts";

/** One row of the command table. */
export interface CommandEntry {
  name: string;
  summary: string;
  load(): Promise<CommandModule>;
}

/** Every command, in the order `tyhooks --help` lists them. */
export const COMMANDS: CommandEntry[] = [
  {
    name: "plugins list",
    summary: "list plugins, what each handles, and the warnings",
    load: () => import("./plugins_list.ts"),
  },
  {
    name: "plugins validate",
    summary: "strict lint of every manifest; exit 1 on any problem",
    load: () => import("./plugins_validate.ts"),
  },
  { name: "plugins dir", summary: "print the plugins dir", load: () => import("./plugins_dir.ts") },
  {
    name: "plugins schema",
    summary: "print the JSON Schema of plugin.yaml",
    load: () => import("./plugins_schema.ts"),
  },
  {
    name: "plugins add",
    summary: "install a plugin from a git URL or a local dir; re-add updates",
    load: () => import("./plugins_add.ts"),
  },
  {
    name: "plugins remove",
    summary: "delete the named plugin's own directory",
    load: () => import("./plugins_remove.ts"),
  },
  {
    name: "plugins run",
    summary: "run a plugin action and exit with its exit code",
    load: () => import("./plugins_run.ts"),
  },
  { name: "fire", summary: "run the hooks of an event", load: () => import("./fire.ts") },
  {
    name: "status-change",
    summary: "map a task status to an event and fire it",
    load: () => import("./status_change.ts"),
  },
  {
    name: "route",
    summary: "ask task.route handlers which profile a task runs under",
    load: () => import("./route.ts"),
  },
  {
    name: "place",
    summary: "ask task.placement handlers on which host a task runs",
    load: () => import("./place.ts"),
  },
  {
    name: "tool pre",
    summary: "ask pre_tool_call hooks whether a tool call is allowed",
    load: () => import("./tool_pre.ts"),
  },
  {
    name: "tool post",
    summary: "tell post_tool_call hooks about a finished tool call",
    load: () => import("./tool_post.ts"),
  },
  {
    name: "services run",
    summary: "supervise every plugin service until SIGINT/SIGTERM",
    load: () => import("./services_run.ts"),
  },
  {
    name: "services list",
    summary: "list the services that would run",
    load: () => import("./services_list.ts"),
  },
  {
    name: "serve",
    summary: "run the daemon: answer over HTTP on a unix socket or TCP",
    load: () => import("./serve.ts"),
  },
  { name: "probe", summary: "print this host's facts as JSON", load: () => import("./probe.ts") },
  {
    name: "pick-host",
    summary: "probe hosts and print a placement answer",
    load: () => import("./pick_host.ts"),
  },
];
