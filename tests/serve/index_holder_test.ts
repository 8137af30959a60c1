import assert from "node:assert/strict";
import { IndexHolder, watchDir } from "../../lib/serve/index_holder.ts";
import type { LoadWarning, PluginIndex } from "../../lib/plugins/types.ts";
import { createLogger } from "../../lib/log.ts";
import { makeTree, tempDir } from "../_cli.ts";
import { collectReports, foldReports } from "../../lib/plugins/load.ts";

/** Counts calls; `after(act)` resolves at the first call once `act` is done, or fails after `ms`. */
function counter() {
  let calls = 0;
  let waiter: (() => void) | undefined;
  return {
    get calls() {
      return calls;
    },
    onChange: () => {
      calls++;
      waiter?.();
    },
    async after(act: () => Promise<unknown>, ms = 5000): Promise<void> {
      const called = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`No change seen within ${ms} ms`)), ms);
        waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      await act();
      await called;
    },
  };
}

type Seen = ReturnType<typeof counter>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs `fn` while `dir` is watched with `options`, its calls counted in `seen`. */
async function watching(
  dir: string,
  options: Parameters<typeof watchDir>[2],
  fn: (seen: Seen) => Promise<void>,
): Promise<void> {
  const seen = counter();
  const watch = watchDir(dir, seen.onChange, options);
  try {
    await fn(seen);
  } finally {
    watch.close();
  }
}

/** Once the watch has settled, a file written in `dir` is seen. */
async function seesChangeIn(seen: Seen, dir: string): Promise<void> {
  await sleep(200);
  await seen.after(() => Deno.writeTextFile(`${dir}/x`, "1"));
}

Deno.test("watchDir() turns a burst of changes into one call", async () => {
  const dir = await tempDir();
  await watching(dir, { debounceMs: 150 }, async (seen) => {
    await sleep(50);
    await seen.after(async () => {
      for (let i = 0; i < 5; i++) await Deno.writeTextFile(`${dir}/f${i}`, "x");
      await Deno.mkdir(`${dir}/sub/deep`, { recursive: true });
    });
    await sleep(300);
    assert.equal(seen.calls, 1);
    // Changes in a subdirectory created after the watch started are seen too.
    await seen.after(() => Deno.writeTextFile(`${dir}/sub/deep/plugin.yaml`, "name: x\n"));
  });
});

Deno.test("watchDir() on a missing dir waits for it, then watches it", async () => {
  const dir = `${await tempDir()}/plugins`;
  await watching(dir, { debounceMs: 50, pollMs: 50 }, async (seen) => {
    await sleep(100);
    assert.equal(seen.calls, 0);
    await seen.after(() => Deno.mkdir(dir));
    await seesChangeIn(seen, dir);
  });
});

Deno.test("watchDir() follows a dir that is removed and created again", async () => {
  const dir = `${await tempDir()}/plugins`;
  await Deno.mkdir(dir);
  await watching(dir, { debounceMs: 50, pollMs: 50 }, async (seen) => {
    await sleep(50);
    await seen.after(() => Deno.remove(dir));
    await seen.after(() => Deno.mkdir(dir));
    await seesChangeIn(seen, dir);
  });
});

Deno.test("watchDir() on a symlink follows it when it is swapped to another tree", async () => {
  const parent = await tempDir();
  const [a, b, link] = [`${parent}/a`, `${parent}/b`, `${parent}/plugins`];
  await Deno.mkdir(a);
  await Deno.mkdir(b);
  await Deno.symlink(a, link);
  await watching(link, { debounceMs: 50, pollMs: 50 }, async (seen) => {
    await sleep(100);
    // Swapped atomically, as a deploy does: the tree watched so far sees nothing.
    await seen.after(async () => {
      await Deno.symlink(b, `${parent}/next`);
      await Deno.rename(`${parent}/next`, link);
    });
    await seesChangeIn(seen, b);
  });
});

Deno.test("watchDir() makes no call after close()", async () => {
  const dir = await tempDir();
  const seen = counter();
  const watch = watchDir(dir, seen.onChange, { debounceMs: 100 });
  await sleep(50);
  await Deno.writeTextFile(`${dir}/x`, "1");
  watch.close();
  await sleep(300);
  assert.equal(seen.calls, 0);
});

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
  const dir = await tempDir();
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

Deno.test("IndexHolder reloads for a manifest edited and a plugin dir added, not for files a hook writes into its plugin dir", async () => {
  const dir = await makeTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: bin/done.sh\n",
    "p/bin/done.sh": "#!/bin/sh\n",
  });
  const holder = new IndexHolder(dir, {
    load: async (d, options) => {
      const collected = await collectReports(d, options);
      return { dir: collected.root, ...foldReports(collected) };
    },
    build: (index) => index.plugins.map((plugin) => plugin.name),
    watch: { debounceMs: 50 },
  });
  await holder.start();
  const generationBecomes = async (n: number) => {
    for (let i = 0; i < 250 && holder.current.generation < n; i++) await sleep(20);
    assert.equal(holder.current.generation, n);
  };
  try {
    await sleep(200);
    // What a hook may leave behind: a log, a dir of its own, a file beside its script.
    await Deno.writeTextFile(`${dir}/p/done.log`, "done\n");
    await Deno.mkdir(`${dir}/p/state`);
    await Deno.writeTextFile(`${dir}/p/state/last`, "1");
    await Deno.writeTextFile(`${dir}/p/bin/done.out`, "x");
    await sleep(1000);
    assert.equal(holder.current.generation, 1);
    await Deno.writeTextFile(
      `${dir}/p/plugin.yaml`,
      "name: renamed\nhooks:\n  task.done: bin/done.sh\n",
    );
    await generationBecomes(2);
    assert.deepEqual(holder.current.built, ["renamed"]);
    // Built beside, then moved in whole, as `plugins add` installs.
    const q = await makeTree({ "plugin.yaml": "name: q\nhooks:\n  task.done: ../p/bin/done.sh\n" });
    await Deno.rename(q, `${dir}/q`);
    await generationBecomes(3);
    assert.deepEqual(holder.current.built, ["q", "renamed"]);
  } finally {
    holder.close();
    await Deno.remove(dir, { recursive: true });
  }
});
