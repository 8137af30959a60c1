/** Plugin trees, pid files and place answers for the CLI tests. */

import assert from "node:assert/strict";
import { join } from "node:path";
import { type CliResult, makeTree } from "../_cli.ts";

/** A plugin dir entry: `<name>/plugin.yaml` handling `event` with `script`. */
export function pluginFiles(name: string, event: string, script: string): Record<string, string> {
  return {
    [`${name}/plugin.yaml`]: `name: ${name}\nhooks:\n  ${event}: hook.sh\n`,
    [`${name}/hook.sh`]: script,
  };
}

/** A plugin dir entry: `<name>/plugin.yaml` with an action per `scripts` entry (id -> script). */
export function actionFiles(name: string, scripts: Record<string, string>): Record<string, string> {
  const ids = Object.keys(scripts);
  const actions = ids.map((id) => `  - id: ${id}\n    command: ${id}.sh\n`).join("");
  return {
    [`${name}/plugin.yaml`]: `name: ${name}\nactions:\n${actions}`,
    ...Object.fromEntries(ids.map((id) => [`${name}/${id}.sh`, scripts[id]])),
  };
}

/**
 * Two plugins named `twin`, in "a" and "b/twin" (that path order), as ty loads them both. Each
 * has a `task.done` hook printing its dir; "a" has two actions of id `go` printing "first" and
 * "second", "b/twin" one printing "third".
 */
export const TWINS: Readonly<Record<string, string>> = {
  "a/plugin.yaml": [
    "name: twin",
    "hooks:",
    "  task.done: done.sh",
    "actions:",
    "  - id: go",
    "    command: first.sh",
    "  - id: go",
    "    label: Go again",
    "    command: second.sh",
  ].join("\n") + "\n",
  "a/done.sh": "#!/bin/sh\necho done in a\n",
  "a/first.sh": "#!/bin/sh\necho first\n",
  "a/second.sh": "#!/bin/sh\necho second\n",
  "b/twin/plugin.yaml":
    "name: twin\nhooks:\n  task.done: done.sh\nactions:\n  - id: go\n    command: third.sh\n",
  "b/twin/done.sh": "#!/bin/sh\necho done in b/twin\n",
  "b/twin/third.sh": "#!/bin/sh\necho third\n",
};

/** A temp plugins dir where each plugin of `scripts` (name -> script) handles `event`. */
export function pluginsHandling(event: string, scripts: Record<string, string>): Promise<string> {
  return makeTree(
    Object.assign({}, ...Object.entries(scripts).map(([name, s]) => pluginFiles(name, event, s))),
  );
}

/** Reads the pid files a test's scripts wrote in `dir` (missing ones skipped). */
export async function pidsIn(dir: string, names: string[]): Promise<number[]> {
  const pids: number[] = [];
  for (const name of names) {
    const text = await Deno.readTextFile(join(dir, name)).catch(() => "");
    if (/^\d+\s*$/.test(text)) pids.push(Number(text));
  }
  return pids;
}

/** What `tyhooks place` prints when no handler names a target. */
export const NO_PLACEMENT = { target: "", workdir: "", reason: "", handler: "" };

/** Asserts that a `tyhooks place` run exited `code` and printed `answer`, other fields empty. */
export function assertPlaced(
  r: CliResult,
  answer: Partial<typeof NO_PLACEMENT>,
  code = 0,
): void {
  assert.equal(r.code, code, r.stderr);
  assert.deepEqual(JSON.parse(r.stdout), { ...NO_PLACEMENT, ...answer });
}
