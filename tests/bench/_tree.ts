/** Plugin trees for benchmarks. */

import { writeTree } from "../_cli.ts";
import { settled } from "../_index.ts";

/**
 * A plugins dir with `count` plugins, each handling `event` with a trivial script, and with
 * `action` an action too (the shape loading is measured with).
 */
export async function pluginTree(
  count: number,
  { event = "task.done", action = false }: { event?: string; action?: boolean } = {},
): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const name = `p${String(i).padStart(4, "0")}`;
    const actions = action ? "actions:\n  - id: sync\n    label: Sync\n    command: sync.sh\n" : "";
    files[`${name}/plugin.yaml`] = `name: ${name}\nhooks:\n  ${event}: hook.sh\n${actions}`;
    files[`${name}/hook.sh`] = "#!/bin/sh\nexit 0\n";
    if (action) files[`${name}/sync.sh`] = "#!/bin/sh\nexit 0\n";
  }
  await writeTree(dir, files);
  await settled(); // Cacheable from the first call.
  return dir;
}

/** A plugins dir with one router answering a config dir. */
export async function routerTree(): Promise<{ dir: string; router: string }> {
  const dir = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
  await writeTree(dir, {
    "r/plugin.yaml": "name: r\nhooks:\n  task.route: route.sh\n",
    "r/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/profiles/a\n",
  });
  await settled(); // Cacheable from the first call.
  return { dir, router: `${dir}/r/route.sh` };
}

/** A plugins dir with one `pre_tool_call` guard that allows everything, persistent or not. */
export async function guardTree(persistent: boolean): Promise<string> {
  const dir = await Deno.makeTempDir({ prefix: "tyhooks-bench-" });
  await writeTree(dir, {
    "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n" +
      (persistent ? "tyhooks:\n  pre_tool_call: {persistent: true}\n" : ""),
    "g/guard.sh": ALLOWING_GUARD,
  });
  await settled(); // Cacheable from the first call.
  return dir;
}

/**
 * A guard that allows every call. A read loop: run once per call it reads one line and exits;
 * persistent, it serves all. The id is cut out by the shell itself: no process started per line.
 */
export const ALLOWING_GUARD = "#!/bin/sh\nwhile IFS= read -r line; do\n" +
  "  id=${line#*'\"id\":\"'}; id=${id%%'\"'*}\n" +
  '  echo \'{"id":"\'"$id"\'","action":"allow","reason":""}\'\ndone\n';
