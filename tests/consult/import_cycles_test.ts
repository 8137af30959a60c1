/**
 * Imports in `lib/` flow one way: no two files import each other, directly or through others,
 * and neither do two folders. Type-only imports count (they are part of the design even when
 * erased), and so do lazy `import()`s (a command table that loads a command file is imported by
 * nothing that file imports).
 */

import assert from "node:assert/strict";
import { dirname, join, normalize, relative } from "node:path";
import { ROOT } from "../_cli.ts";

const LIB = join(ROOT, "lib");
const IMPORT =
  /(?:import|export)\s+(?:type\s+)?[^'";]*?from\s+["'](\.[^"']+)["']|import\(\s*["'](\.[^"']+)["']\s*\)/g;

/** Every `.ts` file of lib/ (relative to it) and the lib/ files it imports. */
async function fileGraph(): Promise<Map<string, Set<string>>> {
  const graph = new Map<string, Set<string>>();
  async function walk(dir: string): Promise<void> {
    for await (const entry of Deno.readDir(dir)) {
      const path = join(dir, entry.name);
      if (entry.isDirectory) await walk(path);
      else if (entry.name.endsWith(".ts")) {
        // JSDoc examples import freely; only the code's own imports count.
        const code = (await Deno.readTextFile(path)).replace(/\/\*[\s\S]*?\*\//g, "");
        const imports = new Set<string>();
        for (const match of code.matchAll(IMPORT)) {
          const target = relative(LIB, normalize(join(dirname(path), match[1] ?? match[2])));
          if (!target.startsWith("..")) imports.add(target);
        }
        graph.set(relative(LIB, path), imports);
      }
    }
  }
  await walk(LIB);
  return graph;
}

/** Each group of nodes that reach one another (Tarjan's strongly connected components). */
function cyclesOf(graph: Map<string, Set<string>>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const cycles: string[][] = [];
  const visit = (node: string) => {
    index.set(node, index.size);
    low.set(node, index.get(node)!);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!graph.has(next)) continue;
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node)!, low.get(next)!));
      } else if (stack.includes(next)) {
        low.set(node, Math.min(low.get(node)!, index.get(next)!));
      }
    }
    if (low.get(node) !== index.get(node)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      group.push(member);
    } while (member !== node);
    if (group.length > 1 || graph.get(node)!.has(node)) cycles.push(group.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return cycles;
}

function folderOf(file: string): string | null {
  const parts = file.split("/");
  return parts.length > 1 ? parts[0] : null;
}

Deno.test("cyclesOf() finds a cycle through a lazy import and a type import (control)", () => {
  const graph = new Map([
    ["cli/commands.ts", new Set(["cli/route.ts"])],
    ["cli/route.ts", new Set(["cli/types.ts", "cli/commands.ts"])],
    ["cli/types.ts", new Set<string>()],
  ]);
  assert.deepEqual(cyclesOf(graph), [["cli/commands.ts", "cli/route.ts"]]);
});

Deno.test("no two files of lib/ import each other, directly or through others", async () => {
  const graph = await fileGraph();
  // Control: the graph holds the imports that are known to be there, lazy ones included.
  assert.ok(graph.get("cli/commands.ts")?.has("cli/runner.ts"), "the graph was read");
  assert.deepEqual(cyclesOf(graph), []);
});

Deno.test("no two folders of lib/ import each other, directly or through others", async () => {
  const folders = new Map<string, Set<string>>();
  for (const [file, imports] of await fileGraph()) {
    const from = folderOf(file);
    if (from === null) continue; // Top-level files (lib/mod.ts re-exports everything) are no folder.
    if (!folders.has(from)) folders.set(from, new Set());
    for (const target of imports) {
      const to = folderOf(target);
      if (to !== null && to !== from) folders.get(from)!.add(to);
    }
  }
  assert.ok(folders.has("consult") && folders.has("hooks"), "the graph was read");
  assert.deepEqual(cyclesOf(folders), []);
});
