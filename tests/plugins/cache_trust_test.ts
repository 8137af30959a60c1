/**
 * The index cache is an optimisation, never an authority: a cache file edited, emptied, planted
 * as a FIFO, or in a dir another user could write ends in a cold load from disk.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { loadPluginsCached } from "../../lib/plugins/cache.ts";
import { cli, makeTree, spawnCli, tempDir, writeTree } from "../_cli.ts";
import { settled } from "../_index.ts";

const ROUTER = {
  "r/plugin.yaml": "name: r\nhooks:\n  task.route: route.sh\n",
  "r/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/profiles/a\n",
};
const GUARD = {
  "g/plugin.yaml": "name: g\nhooks:\n  pre_tool_call: guard.sh\n",
  "g/guard.sh": '#!/bin/sh\necho \'{"action":"block","reason":"guarded"}\'\n',
};

interface Warm {
  root: string;
  plugins: string;
  /** The XDG_CACHE_HOME of the CLI runs. */
  cacheHome: string;
  /** `<cacheHome>/tyhooks`. */
  cacheDir: string;
  reload: () => ReturnType<typeof loadPluginsCached>;
  cacheFile: () => string;
}

async function withWarm(files: Record<string, string>, fn: (w: Warm) => Promise<void>) {
  const root = await tempDir({ prefix: "tyhooks-cache-" });
  try {
    const plugins = join(root, "plugins");
    await writeTree(plugins, files);
    await settled();
    const cacheHome = join(root, "cache");
    const cacheDir = join(cacheHome, "tyhooks");
    const reload = () => loadPluginsCached(plugins, { cacheDir });
    assert.equal((await reload()).hit, false);
    assert.equal((await reload()).hit, true, "control: the cache is used when untouched");
    const cacheFile = () => {
      const name = [...Deno.readDirSync(cacheDir)].find((e) => /^index-.*\.json$/.test(e.name));
      assert.ok(name, "a cache file was written");
      return join(cacheDir, name.name);
    };
    await fn({ root, plugins, cacheHome, cacheDir, reload, cacheFile });
  } finally {
    await Deno.remove(root, { recursive: true });
  }
}

function readCache(path: string): { sum: string; body: Record<string, unknown> } {
  const text = Deno.readTextFileSync(path);
  const newline = text.indexOf("\n");
  return { sum: text.slice(0, newline), body: JSON.parse(text.slice(newline + 1)) };
}

function writeCache(path: string, sum: string, body: unknown): void {
  Deno.writeTextFileSync(path, `${sum}\n${JSON.stringify(body)}`);
}

// The checksum a careful forger writes (SHA-256 of the body): shows that the consistency checks
// hold on their own.
async function checksum(body: unknown): Promise<string> {
  const bytes = new TextEncoder().encode(JSON.stringify(body));
  const sum = await crypto.subtle.digest("SHA-256", bytes);
  return Array.from(new Uint8Array(sum), (b) => b.toString(16).padStart(2, "0")).join("");
}

function routeArgs(plugins: string): string[] {
  return ["route", "--plugins-dir", plugins, "--task-json", '{"id":1}'];
}

Deno.test("a hook path edited in the cache to another script does not run it", async () => {
  await withWarm(ROUTER, async (w) => {
    const marker = join(w.root, "evil-ran");
    const evil = join(w.root, "evil.sh");
    await Deno.writeTextFile(evil, `#!/bin/sh\ntouch '${marker}'\necho CLAUDE_CONFIG_DIR=/evil\n`);
    await Deno.chmod(evil, 0o755);
    // The warm CLI cache is the one the test edits.
    const first = await cli(routeArgs(w.plugins), { env: { XDG_CACHE_HOME: w.cacheHome } });
    assert.equal(first.code, 0, first.stderr);
    const { sum, body } = readCache(w.cacheFile());
    const text = JSON.stringify(body).replaceAll(join(w.plugins, "r", "route.sh"), evil);
    const forged = JSON.parse(text);
    // The careful attacker also records the new script with its true signature.
    forged.deps[evil] = Object.values(forged.deps)[0];
    writeCache(w.cacheFile(), sum, forged);
    const result = await cli(routeArgs(w.plugins), { env: { XDG_CACHE_HOME: w.cacheHome } });
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /CLAUDE_CONFIG_DIR=\/profiles\/a/);
    assert.equal(await Deno.stat(marker).then(() => true, () => false), false);
    // Even with a true checksum, a script the load never looked at is refused.
    const unrecorded = JSON.parse(text);
    delete unrecorded.deps[evil];
    writeCache(w.cacheFile(), await checksum(unrecorded), unrecorded);
    const again = await w.reload();
    assert.equal(again.hit, false);
    assert.match(again.reason ?? "", /evil\.sh" is not recorded/);
    assert.equal(again.index.plugins[0].hooks["task.route"], join(w.plugins, "r", "route.sh"));
  });
});

Deno.test("a cache with its deps emptied and its plugins removed does not drop a guard", async () => {
  await withWarm(GUARD, async (w) => {
    const env = { XDG_CACHE_HOME: w.cacheHome };
    const pre = ["tool", "pre", "--tool", "bash", "--args", '{"command":"rm -rf /"}'];
    const args = [...pre, "--plugins-dir", w.plugins];
    assert.equal((await cli(args, { env })).code, 2, "control: the guard blocks");
    const { sum, body } = readCache(w.cacheFile());
    const emptied = {
      ...body,
      deps: {},
      pluginDirs: [],
      index: { ...body.index as object, plugins: [] },
    };
    writeCache(w.cacheFile(), sum, emptied);
    const blocked = await cli(args, { env });
    assert.equal(blocked.code, 2, blocked.stdout + blocked.stderr);
    assert.deepEqual(JSON.parse(blocked.stdout), { action: "block", reason: "guarded" });
    // With a true checksum, the emptied index is still refused: the plugins dir itself is not
    // among the recorded paths.
    writeCache(w.cacheFile(), await checksum(emptied), emptied);
    const again = await w.reload();
    assert.equal(again.hit, false);
    assert.equal(again.index.plugins[0].name, "g");
  });
});

Deno.test("a cache file cut short or edited by hand is a miss, and no key is kept beside it", async () => {
  await withWarm(ROUTER, async (w) => {
    assert.deepEqual(
      [...Deno.readDirSync(w.cacheDir)].map((e) => e.name),
      [w.cacheFile().slice(w.cacheDir.length + 1)],
      "the cache dir holds the index file alone",
    );
    const text = Deno.readTextFileSync(w.cacheFile());
    Deno.writeTextFileSync(w.cacheFile(), text.slice(0, -1));
    const cut = await w.reload();
    assert.equal(cut.hit, false);
    assert.match(cut.reason ?? "", /checksum does not match/);
    assert.equal((await w.reload()).hit, true, "the rewritten file is used");
    const { sum, body } = readCache(w.cacheFile());
    writeCache(w.cacheFile(), sum, { ...body, pluginDirs: [] });
    const edited = await w.reload();
    assert.equal(edited.hit, false);
    assert.match(edited.reason ?? "", /checksum does not match/);
    assert.equal(edited.index.plugins[0].name, "r");
  });
});

Deno.test("a cache dir or file that another user could write is ignored", async () => {
  await withWarm(ROUTER, async (w) => {
    await Deno.chmod(w.cacheDir, 0o770);
    const groupDir = await w.reload();
    assert.equal(groupDir.hit, false);
    assert.match(groupDir.reason ?? "", /is writable by group or others \(mode 0770\)/);
    await Deno.chmod(w.cacheDir, 0o700);
    assert.equal((await w.reload()).hit, true, "trusted again, the untouched file is used");
    await Deno.chmod(w.cacheFile(), 0o660);
    const groupFile = await w.reload();
    assert.equal(groupFile.hit, false);
    assert.match(groupFile.reason ?? "", /has mode 0660, not 0600/);
    const info = await Deno.stat(w.cacheFile());
    assert.equal(info.mode! & 0o777, 0o600, "the rewritten file is 0600");
    assert.equal((await Deno.stat(w.cacheDir)).mode! & 0o777, 0o700);
  });
});

const NOBODY = 65534;
const root = Deno.uid() === 0;

Deno.test({
  name: "a cache dir or file owned by another user is ignored",
  ignore: !root,
  async fn() {
    // Skipped unless run as root: giving a file to another user needs chown.
    await withWarm(ROUTER, async (w) => {
      await Deno.chown(w.cacheFile(), NOBODY, null);
      const file = await w.reload();
      assert.equal(file.hit, false);
      assert.match(file.reason ?? "", /is not owned by the user/);
      assert.equal((await w.reload()).hit, true);
      await Deno.chown(w.cacheDir, NOBODY, null);
      const dir = await w.reload();
      assert.equal(dir.hit, false);
      assert.match(dir.reason ?? "", /is owned by user 65534/);
      assert.equal((await w.reload()).hit, false, "and nothing is written into it");
    });
  },
});

if (!root) {
  console.log("skipped: the other-user cache test needs root (to chown to nobody)");
}

Deno.test("a FIFO at the cache path is never opened: the load goes on from disk", async () => {
  await withWarm(ROUTER, async (w) => {
    const file = w.cacheFile();
    await Deno.remove(file);
    const mkfifo = await new Deno.Command("mkfifo", { args: [file] }).output();
    assert.ok(mkfifo.success);
    const loaded = await w.reload();
    assert.equal(loaded.hit, false);
    assert.equal(loaded.index.plugins[0].name, "r");
    // And through the CLI, bounded: it must answer, not hang in open().
    await Deno.remove(file).catch(() => {});
    await new Deno.Command("mkfifo", { args: [file] }).output();
    const child = spawnCli(routeArgs(w.plugins), {
      env: { XDG_CACHE_HOME: w.cacheHome },
      stdin: "null",
    });
    const timer = setTimeout(() => child.kill("SIGKILL"), 20_000);
    const out = await child.output();
    clearTimeout(timer);
    assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
    assert.match(new TextDecoder().decode(out.stdout), /CLAUDE_CONFIG_DIR=\/profiles\/a/);
  });
});

Deno.test("a guard installed while a cold load runs is seen by the next warm call", async () => {
  // Many plugins make the cold load long enough for the guard to land in the middle of it.
  const files: Record<string, string> = {};
  for (let i = 0; i < 300; i++) {
    files[`n${String(i).padStart(3, "0")}/plugin.yaml`] = "name: n" + i +
      "\nhooks:\n  task.done: d.sh\n";
    files[`n${String(i).padStart(3, "0")}/d.sh`] = "#!/bin/sh\n";
  }
  const plugins = await makeTree(files);
  const cacheDir = await tempDir();
  await settled();
  try {
    const cold = loadPluginsCached(plugins, { cacheDir, concurrency: 1 });
    // Let discovery list the plugins dir, then install the guard while the manifests load.
    await new Promise((resolve) => setTimeout(resolve, 1));
    await writeTree(plugins, GUARD);
    await cold;
    const warm = await loadPluginsCached(plugins, { cacheDir });
    assert.ok(warm.index.plugins.some((p) => p.name === "g"), "the guard is loaded");
    await settled();
    const later = await loadPluginsCached(plugins, { cacheDir });
    assert.ok(later.index.plugins.some((p) => p.name === "g"), "and stays loaded");
  } finally {
    await Deno.remove(plugins, { recursive: true });
    await Deno.remove(cacheDir, { recursive: true });
  }
});

Deno.test("loadPluginsCached() sees a manifest rewritten in the same second with its size, inode and old mtime kept (cp -p), though Deno's ctime has whole seconds", async () => {
  const plugins = await makeTree({});
  const cacheDir = await tempDir();
  try {
    // Early in a second, so the steps below fall within it and only the ctime's second tells.
    await new Promise((resolve) => setTimeout(resolve, 1000 - Date.now() % 1000 + 10));
    const manifest = join(plugins, "g/plugin.yaml");
    await writeTree(plugins, {
      ...GUARD,
      "g/plugin.yaml": "name: g\nhooks:\n  task.done: guard.sh\n".padEnd(42, "#"),
    });
    const { mtime } = await Deno.stat(manifest);
    await new Promise((resolve) => setTimeout(resolve, 30)); // Past the 20 ms of coarse clocks.
    assert.ok(
      !(await loadPluginsCached(plugins, { cacheDir })).index.plugins[0].hooks.pre_tool_call,
    );
    // The same 42 bytes, written in place, the old mtime put back.
    await Deno.writeTextFile(manifest, GUARD["g/plugin.yaml"].padEnd(42, "#"));
    await Deno.utime(manifest, new Date(), mtime!);
    const now = await loadPluginsCached(plugins, { cacheDir });
    assert.ok(now.index.plugins[0].hooks.pre_tool_call, "the guard is loaded");
    await settled();
    await loadPluginsCached(plugins, { cacheDir }); // Settled: this one writes the cache.
    const later = await loadPluginsCached(plugins, { cacheDir });
    assert.equal(later.hit, true);
    assert.ok(later.index.plugins[0].hooks.pre_tool_call, "and stays loaded");
  } finally {
    await Deno.remove(plugins, { recursive: true });
    await Deno.remove(cacheDir, { recursive: true });
  }
});
