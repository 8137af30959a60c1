/** Test helpers for services: a hand-built plugin index over a temp plugin dir. */

import type { PluginIndex, PluginService } from "../../lib/plugins/types.ts";
import type { LogLevel } from "../../lib/log.ts";
import { tempDir } from "../_cli.ts";

/** A service as tests write it: name and command, the rest defaulted. */
export type ServiceInput = Pick<PluginService, "name" | "command"> & Partial<PluginService>;

/** A plugin dir in a fresh temp dir with `services`, as the loader would index it. */
export async function serviceIndex(
  services: ServiceInput[],
  plugin = "svc",
): Promise<{ index: PluginIndex; dir: string }> {
  const dir = await Deno.realPath(await tempDir({ prefix: "tyhooks-svc-" }));
  const index: PluginIndex = {
    dir,
    warnings: [],
    plugins: [{
      name: plugin,
      version: "",
      description: "",
      dir,
      hooks: {},
      actions: [],
      services: services.map((s) => ({ cwd: dir, env: [], restart: "on-failure", ...s })),
      workflows: [],
      routines: [],
    }],
  };
  return { index, dir };
}

/** A logger that keeps every line, for assertions. */
export function recordingLogger(): {
  log: { log(level: LogLevel, message: string, fields?: Record<string, unknown>): void };
  lines: { level: LogLevel; message: string; at: number }[];
} {
  const lines: { level: LogLevel; message: string; at: number }[] = [];
  return {
    lines,
    log: { log: (level, message) => lines.push({ level, message, at: performance.now() }) },
  };
}

/** Polls `check` every 20 ms until it is true or `ms` pass; returns its last value. */
export async function until(check: () => boolean | Promise<boolean>, ms = 5000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 20));
  }
  return await check();
}

/** Lines of a file, or [] when it does not exist yet. */
export async function fileLines(path: string): Promise<string[]> {
  const text = await Deno.readTextFile(path).catch(() => "");
  return text.split("\n").filter((l) => l !== "");
}
