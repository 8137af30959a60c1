/**
 * zod and yaml cost tens of milliseconds to load: `--help`, `--version` and every command file
 * must reach them only through a dynamic `import()`, taken when a plugin is actually loaded.
 * This reads Deno's own module graph, so it checks what really loads, not what a grep sees.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { MAIN, ROOT } from "../_cli.ts";

interface GraphModule {
  specifier: string;
  kind?: string;
  dependencies?: { specifier: string; code?: { specifier: string }; isDynamic?: boolean }[];
}

/**
 * The modules `entry` loads before running any code (static imports, types excluded), or with
 * `dynamic`, every module it can ever load.
 */
async function staticImports(entry: string, { dynamic = false } = {}): Promise<string[]> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", entry],
    cwd: ROOT,
    env: { NO_COLOR: "1" },
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  const graph = JSON.parse(new TextDecoder().decode(out.stdout)) as {
    roots: string[];
    modules: GraphModule[];
    redirects: Record<string, string>;
  };
  const bySpecifier = new Map(graph.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const queue = [...graph.roots];
  while (queue.length > 0) {
    const specifier = queue.pop()!;
    if (seen.has(specifier)) continue;
    seen.add(specifier);
    for (const dep of bySpecifier.get(specifier)?.dependencies ?? []) {
      if (dep.code && (dynamic || !dep.isDynamic)) {
        queue.push(graph.redirects[dep.code.specifier] ?? dep.code.specifier);
      }
    }
  }
  return [...seen];
}

function npmModules(specifiers: string[]): string[] {
  return specifiers.filter((s) => s.startsWith("npm:") || s.includes("node_modules"));
}

Deno.test("the static import graph check sees a static npm import (control)", async () => {
  const reached = await staticImports(join(ROOT, "lib/plugins/manifest_schema.ts"));
  assert.ok(npmModules(reached).some((s) => s.includes("zod")), reached.join("\n"));
});

Deno.test("main.ts (--help, --version) statically imports neither zod nor yaml", async () => {
  assert.deepEqual(npmModules(await staticImports(MAIN)), []);
});

Deno.test("no command file statically imports zod or yaml", async () => {
  const commands = [...Deno.readDirSync(join(ROOT, "lib/cli"))]
    .filter((e) => e.isFile && e.name.endsWith(".ts"))
    .map((e) => join(ROOT, "lib/cli", e.name));
  for (const file of commands) {
    assert.deepEqual(npmModules(await staticImports(file)), [], file);
  }
});

Deno.test("the CLI never loads lib/mod.ts, not even dynamically", async () => {
  const reached = await staticImports(MAIN, { dynamic: true });
  // Control: dynamic imports are followed (the plugin loader reaches the manifest schema so).
  assert.ok(reached.some((s) => s.endsWith("/lib/plugins/manifest_schema.ts")), reached.join("\n"));
  // It loads every module of the library at once, zod and yaml with them.
  assert.ok(!reached.includes(pathToFileURL(join(ROOT, "lib/mod.ts")).href));
});
