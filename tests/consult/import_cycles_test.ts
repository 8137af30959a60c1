/**
 * No import cycle between `lib/` folders (issue 13): a folder's files may import another
 * folder's only when that folder does not, directly or through others, import back. Type-only
 * imports count too: they are part of the design even when erased. Top-level files (`lib/mod.ts`
 * re-exports everything; small shared helpers) are not folders and are left out.
 */

import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { ROOT } from "../_cli.ts";

const LIB = join(ROOT, "lib");
const IMPORT =
  /(?:import|export)\s+(?:type\s+)?[^'";]*?from\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

function folderOf(path: string): string | null {
  const parts = relative(LIB, path).split("/");
  return parts.length > 1 && parts[0] !== ".." ? parts[0] : null;
}

async function folderGraph(): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  async function walk(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts")) {
        const from = folderOf(path);
        if (from === null) continue;
        // JSDoc examples import freely; only the code's own imports count.
        const code = (await Deno.readTextFile(path)).replace(/\/\*[\s\S]*?\*\//g, "");
        for (const match of code.matchAll(IMPORT)) {
          const to = folderOf(normalize(join(dirname(path), match[1] ?? match[2])));
          if (to === null || to === from) continue;
          if (!graph.has(from)) graph.set(from, new Set());
          graph.get(from)!.add(to);
        }
      }
    }
  }
  await walk(LIB);
  return graph;
}

Deno.test("no import cycle between lib/ folders", async () => {
  const graph = await folderGraph();
  assert.ok(graph.has("consult") && graph.has("hooks"), "the graph was read");
  const cycles: string[] = [];
  const visit = (node: string, path: string[]) => {
    for (const next of graph.get(node) ?? []) {
      if (next === path[0]) cycles.push([...path, next].join(" -> "));
      else if (!path.includes(next) && next > path[0]) visit(next, [...path, next]);
    }
  };
  for (const start of graph.keys()) visit(start, [start]);
  assert.deepEqual(cycles, []);
});
