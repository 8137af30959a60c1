import assert from "node:assert/strict";
import { IndexHolder } from "../../lib/serve/index_holder.ts";
import type { LoadWarning, PluginIndex } from "../../lib/plugins/types.ts";
import { createLogger } from "../../lib/log.ts";

function warning(message: string): LoadWarning {
  return { plugin: null, path: "/p/x/plugin.yaml", line: 1, column: 1, message };
}

/** A loader returning the queued indexes in turn (an Error is thrown). */
function loader(...results: (PluginIndex | Error)[]) {
  let loads = 0;
  return {
    get loads() {
      return loads;
    },
    load: async (_dir: string) => {
      await new Promise((r) => setTimeout(r, 5));
      const result = results[Math.min(loads++, results.length - 1)];
      if (result instanceof Error) throw result;
      return result;
    },
  };
}

const index = (names: string[], warnings: LoadWarning[] = []): PluginIndex => ({
  dir: "/p",
  plugins: names.map((name) => ({
    name,
    version: "",
    description: "",
    dir: `/p/${name}`,
    hooks: {},
    actions: [],
    services: [],
    workflows: [],
    routines: [],
  })),
  warnings,
});

Deno.test("IndexHolder: a call in flight keeps the snapshot it started with", async () => {
  const source = loader(index(["a"]), index(["a", "b"]));
  const holder = new IndexHolder("/p", {
    ...source,
    build: (i) => i.plugins.map((p) => p.name),
    watch: false,
  });
  await holder.start();
  const inFlight = holder.current;
  await holder.reload("test");
  assert.deepEqual(inFlight.built, ["a"]);
  assert.deepEqual(holder.current.built, ["a", "b"]);
  assert.equal(holder.current.generation, 2);
});

Deno.test("IndexHolder: a reload that fails keeps the previous plugins and logs why", async () => {
  const lines: string[] = [];
  const source = loader(index(["a"]), new Error("EACCES"));
  const holder = new IndexHolder("/p", {
    ...source,
    build: (i) => i.plugins.length,
    log: createLogger({ write: (l) => lines.push(l) }),
    watch: false,
  });
  await holder.start();
  await holder.reload("SIGHUP");
  assert.equal(holder.current.built, 1);
  assert.match(
    lines.join(""),
    /error: Cannot reload the plugins: EACCES: keeping the previous ones/,
  );
});

Deno.test("IndexHolder logs each load warning once, not again at every reload", async () => {
  const lines: string[] = [];
  const old = warning("Skipped: bad YAML");
  const source = loader(
    index(["a"], [old]),
    index(["a"], [old]),
    index([], [old, warning("Skipped: duplicate name")]),
  );
  const holder = new IndexHolder("/p", {
    ...source,
    build: () => null,
    log: createLogger({ write: (l) => lines.push(l) }),
    watch: false,
  });
  await holder.start();
  await holder.reload("change");
  await holder.reload("change");
  const warnings = lines.filter((l) => l.includes("warn:"));
  assert.equal(warnings.length, 2);
  assert.match(warnings[0], /Skipped: bad YAML/);
  assert.match(warnings[1], /Skipped: duplicate name/);
});

Deno.test("IndexHolder coalesces reloads asked for while one waits to start", async () => {
  const source = loader(index([]));
  const holder = new IndexHolder("/p", { ...source, build: () => null, watch: false });
  await holder.start();
  await Promise.all(Array.from({ length: 10 }, () => holder.reload("burst")));
  assert.equal(source.loads, 2);
});

Deno.test("IndexHolder reloads by itself when the plugins dir changes", async () => {
  const dir = await Deno.makeTempDir();
  const source = loader(index([]), index(["new"]));
  const holder = new IndexHolder(dir, {
    ...source,
    build: (i) => i.plugins.length,
    watch: { debounceMs: 50 },
  });
  await holder.start();
  try {
    await new Promise((r) => setTimeout(r, 50));
    await Deno.writeTextFile(`${dir}/plugin.yaml`, "name: new\n");
    const deadline = Date.now() + 5000;
    while (holder.current.built === 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.equal(holder.current.built, 1);
  } finally {
    holder.close();
  }
});
