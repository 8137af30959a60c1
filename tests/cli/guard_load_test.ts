/**
 * Guards fail closed on load failures too (SPEC "Trust boundaries"), and tool matchers: a guard is
 * lost unless tyhooks can show it was not there, so a load failure blocks under the default policy
 * unless the plugin's manifest shows no `pre_tool_call` hook; a guard whose `tools` setting does
 * not match the tool is not even started.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, tempDir } from "../_cli.ts";
import { agentPayload, groupGone } from "../_procs.ts";

const GUARD = "#!/bin/sh\necho 'checked' >&2\nexit 0\n";

// Root reads what its mode forbids; without these capabilities it is held to the mode bits.
const AS_OWNER = Deno.uid() === 0
  ? ["setpriv", "--bounding-set=-dac_override,-dac_read_search", "--"]
  : [];
const CAN_DROP_CAPS = Deno.uid() !== 0 || (() => {
  try {
    const args = [...AS_OWNER.slice(1), "true"];
    return new Deno.Command("setpriv", { args, stdout: "null", stderr: "null" }).outputSync()
      .success;
  } catch {
    return false; // No setpriv.
  }
})();

/** `tool pre --tool TOOL` over `plugins`, run twice (cold load, then the index cache). */
async function pre(plugins: string, tool = "bash", ...extra: string[]) {
  const cache = await tempDir();
  const runs = [];
  for (let i = 0; i < 2; i++) {
    const r = await cli(["tool", "pre", "--tool", tool, "--plugins-dir", plugins, ...extra], {
      env: { XDG_CACHE_HOME: cache },
      wrap: AS_OWNER,
    });
    runs.push({ ...r, verdict: r.stdout ? JSON.parse(r.stdout) : undefined });
  }
  await Deno.remove(cache, { recursive: true });
  assert.deepEqual(runs[1].verdict, runs[0].verdict, "the cached index decides the same");
  return runs[0];
}

/** What Claude Code writes on a PreToolUse hook's stdin. */
const CLAUDE_INPUT = agentPayload("claude", "PreToolUse");

async function assertBlocked(plugins: string, why: RegExp) {
  const claude = await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], {
    stdin: CLAUDE_INPUT,
    env: { TYHOOKS_NO_CACHE: "1" },
    wrap: AS_OWNER,
  });
  assert.equal(claude.code, 2, claude.stderr);
  assert.match(claude.stderr, why);
  const r = await pre(plugins);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(r.verdict.action, "block");
  assert.match(r.verdict.reason, /^Cannot trust the pre-tool-call hooks: /);
  assert.match(r.verdict.reason, why);
  assert.match(r.verdict.reason, /\(failure policy: block\)$/);
  const open = await pre(plugins, "bash", "--on-failure", "allow");
  assert.deepEqual([open.code, open.verdict.action], [0, "allow"], open.stderr);
}

Deno.test("tyhooks tool pre blocks when a guard script lost its +x", async () => {
  const plugins = await makeTree({
    "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
    "guard/guard.sh": GUARD,
  });
  await Deno.chmod(join(plugins, "guard", "guard.sh"), 0o644);
  await assertBlocked(plugins, /"[^"]*guard" that declares pre_tool_call was not loaded with it/);
});

Deno.test(
  "tyhooks tool pre blocks when a plugin lost its guard hook but kept its others",
  async () => {
    const plugins = await makeTree({
      "guard/plugin.yaml":
        "name: guard\nhooks:\n  pre_tool_call: missing.sh\n  task.done: done.sh\n",
      "guard/done.sh": GUARD,
    });
    await assertBlocked(plugins, /Dropped hook "pre_tool_call"/);
  },
);

Deno.test("tyhooks tool pre blocks when the guard's manifest has a YAML error", async () => {
  const plugins = await makeTree({
    "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n  oops: [unclosed\n",
    "guard/guard.sh": GUARD,
  });
  await assertBlocked(
    plugins,
    /the manifest of the plugin in "[^"]*guard" could not be read, so it may declare pre_tool_call: Skipped plugin in "guard": invalid YAML/,
  );
});

Deno.test("tyhooks tool pre blocks when the plugins dir cannot be read", async () => {
  // Root reads a mode-000 dir; a plugins dir path that is a file cannot be read by anyone.
  const parent = await tempDir();
  const plugins = join(parent, "plugins");
  await Deno.writeTextFile(plugins, "not a directory\n");
  await assertBlocked(plugins, /the plugins dir "[^"]*plugins" could not be read/);
  await Deno.remove(parent, { recursive: true });
});

Deno.test({
  name: "tyhooks tool pre blocks when a mode-000 plugins dir cannot be read",
  // Root reads a mode-000 dir anyway unless its capabilities are dropped (setpriv); the test
  // above (a path that is a file) covers it where they cannot be.
  ignore: !CAN_DROP_CAPS,
  fn: async () => {
    const plugins = await makeTree({});
    await Deno.chmod(plugins, 0o000);
    try {
      await assertBlocked(plugins, /could not be read/);
    } finally {
      await Deno.chmod(plugins, 0o700);
    }
  },
});

Deno.test({
  name:
    "tyhooks tool pre blocks when a folder below the plugins dir cannot be looked into: a plugin dir, a collection, a link's target",
  // Root is held to the mode bits only without its capabilities (setpriv).
  ignore: !CAN_DROP_CAPS,
  fn: async () => {
    const plugins = await makeTree({
      "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
      "guard/guard.sh": GUARD,
      "coll/other/plugin.yaml": "name: other\nhooks:\n  task.done: guard.sh\n",
      "coll/other/guard.sh": GUARD,
    });
    const outside = await makeTree({});
    const guard = join(plugins, "guard");
    try {
      for (const mode of [0o000, 0o644]) {
        await Deno.chmod(guard, mode);
        await assertBlocked(
          plugins,
          /could not be read, and may hold a pre_tool_call hook: Cannot read "guard": Permission denied/,
        );
      }
      await Deno.chmod(guard, 0o755);
      await Deno.chmod(join(plugins, "coll"), 0o000);
      await assertBlocked(plugins, /Cannot read "coll": Permission denied/);
      await Deno.chmod(join(plugins, "coll"), 0o755);
      await Deno.rename(guard, join(outside, "guard"));
      await Deno.symlink(join(outside, "guard"), guard);
      await Deno.chmod(outside, 0o000);
      await assertBlocked(plugins, /Cannot read "guard": Permission denied/);
    } finally {
      // Removable again when the test process ends.
      for (const dir of [outside, join(plugins, "coll"), guard]) {
        await Deno.chmod(dir, 0o755).catch(() => {});
      }
    }
  },
});

/** `text` as UTF-16 with its byte order mark, little- or big-endian. */
function utf16(text: string, order: "le" | "be"): Uint8Array {
  const bytes = new Uint8Array(2 + text.length * 2);
  const view = new DataView(bytes.buffer);
  view.setUint16(0, 0xfeff, order === "le");
  for (let i = 0; i < text.length; i++) {
    view.setUint16(2 + i * 2, text.charCodeAt(i), order === "le");
  }
  return bytes;
}

Deno.test("tyhooks tool pre runs a guard whose manifest is UTF-16 with a byte order mark, as ty does", async () => {
  for (const order of ["le", "be"] as const) {
    const plugins = await makeTree({
      "guard/guard.sh": '#!/bin/sh\necho \'{"action":"block","reason":"guarded"}\'\n',
    });
    const manifest = "name: guard\nhooks:\n  pre_tool_call: guard.sh\n";
    await Deno.writeFile(join(plugins, "guard", "plugin.yaml"), utf16(manifest, order));
    await Deno.chmod(join(plugins, "guard", "guard.sh"), 0o755);
    const r = await pre(plugins);
    assert.deepEqual([r.code, r.verdict], [2, { action: "block", reason: "guarded" }], r.stderr);
    // Broken, it may declare a guard: the call blocks.
    await Deno.writeFile(join(plugins, "guard", "plugin.yaml"), utf16(manifest + "x: [\n", order));
    await assertBlocked(plugins, /could not be read, so it may declare pre_tool_call/);
  }
});

/** `text` (ASCII) in a wide encoding, with or without its byte order mark. */
function wide(
  text: string,
  encoding: "utf-16le" | "utf-16be" | "utf-32le" | "utf-32be",
  bom: boolean,
) {
  const width = encoding.startsWith("utf-16") ? 2 : 4;
  const little = encoding.endsWith("le");
  const units = [...(bom ? [0xfeff] : []), ...[...text].map((c) => c.charCodeAt(0))];
  const bytes = new Uint8Array(units.length * width);
  const view = new DataView(bytes.buffer);
  units.forEach((unit, i) => {
    if (width === 2) view.setUint16(i * 2, unit, little);
    else view.setUint32(i * 4, unit, little);
  });
  return bytes;
}

const BLOCKALL = "name: blockall\nhooks:\n  pre_tool_call: guard.sh\n";
const BLOCKS = "#!/bin/sh\necho 'blocked by blockall' >&2\nexit 2\n";

Deno.test("tyhooks tool pre blocks when a manifest's hooks is not a map: an indentation slip, a list", async () => {
  for (
    const manifest of [
      "name: blockall\nhooks:\npre_tool_call: guard.sh\n",
      "name: blockall\nhooks: [pre_tool_call, guard.sh]\n",
      "name: blockall\nhooks: guard.sh\n",
    ]
  ) {
    const plugins = await makeTree({
      "blockall/plugin.yaml": manifest,
      "blockall/guard.sh": BLOCKS,
    });
    await assertBlocked(plugins, /the "hooks" of the plugin in "[^"]*blockall" is not a map/);
  }
});

Deno.test("tyhooks tool pre blocks when a guard is written beside hooks: while another entry keeps its plugin loaded", async () => {
  const action = "actions: [{id: a, command: guard.sh}]\n";
  for (
    const [manifest, why] of [
      [`name: blockall\nhooks:\npre_tool_call: guard.sh\n${action}`, /is not a map/],
      ["name: blockall\nhooks:\n  task.done: guard.sh\npre_tool_call: guard.sh\n", /declares/],
      [`name: blockall\npre_tool_call: guard.sh\n${action}`, /declares/],
    ] as const
  ) {
    const plugins = await makeTree({
      "blockall/plugin.yaml": manifest,
      "blockall/guard.sh": BLOCKS,
    });
    await assertBlocked(plugins, why);
    await assertBlocked(plugins, /Dropped hook "pre_tool_call": it is outside "hooks:"/);
  }
});

Deno.test("tyhooks tool pre allows beside a plugin whose unknown top-level key names no event", async () => {
  for (const extra of ["", "  task.failed: gone.sh\n"]) {
    const plugins = await makeTree({
      "site/plugin.yaml":
        `name: site\nhomepage: https://example.com\nhooks:\n  task.done: d.sh\n${extra}`,
      "site/d.sh": GUARD,
    });
    const claude = await cli(["tool", "pre", "--claude", "--plugins-dir", plugins], {
      stdin: CLAUDE_INPUT,
      env: { TYHOOKS_NO_CACHE: "1" },
    });
    assert.deepEqual([claude.code, claude.stdout, claude.stderr], [0, "", ""], extra);
    const r = await pre(plugins);
    assert.deepEqual([r.code, r.verdict], [0, { action: "allow", reason: "" }], r.stderr);
  }
});

Deno.test("tyhooks tool pre blocks when a guard's manifest is UTF-16 without a byte order mark, or UTF-32, which ty does not read either", async () => {
  const plugins = await makeTree({ "blockall/guard.sh": BLOCKS });
  for (const encoding of ["utf-16le", "utf-16be", "utf-32le", "utf-32be"] as const) {
    for (const bom of encoding.startsWith("utf-16") ? [false] : [false, true]) {
      await Deno.writeFile(join(plugins, "blockall", "plugin.yaml"), wide(BLOCKALL, encoding, bom));
      const name = encoding.toUpperCase();
      await assertBlocked(plugins, new RegExp(`plugin.yaml is ${name} text`));
    }
  }
});

Deno.test("tyhooks tool pre blocks when a manifest that does not parse names the event only through escapes, or not at all", async () => {
  for (
    const manifest of [
      'name: blockall\nhooks:\n  "pre\\x5ftool_call": guard.sh\n  oops: [unclosed\n',
      "name: blockall\nhooks: [unclosed\n",
    ]
  ) {
    const plugins = await makeTree({
      "blockall/plugin.yaml": manifest,
      "blockall/guard.sh": BLOCKS,
    });
    await assertBlocked(
      plugins,
      /the manifest of the plugin in "[^"]*blockall" could not be read, so it may declare pre_tool_call/,
    );
  }
});

Deno.test("tyhooks tool pre blocks, and plugins validate fails, when a plugin dir or the plugins dir is a link that leads nowhere", async () => {
  const plugins = await makeTree({
    "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: guard.sh\n",
    "guard/guard.sh": '#!/bin/sh\necho \'{"action":"allow","reason":"fine"}\'\n',
  });
  const validate = (dir: string) =>
    cli(["plugins", "validate", "--plugins-dir", dir], { env: { TYHOOKS_NO_CACHE: "1" } });
  for (const [name, target] of [["blockall", "/nonexistent/blockall"], ["loop", "loop"]]) {
    await Deno.symlink(target, join(plugins, name));
    await assertBlocked(plugins, new RegExp(`Cannot read "${name}": it is a link to "${target}"`));
    const r = await validate(plugins);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, new RegExp(`${name}:1:1: Cannot read "${name}": it is a link`));
    await Deno.remove(join(plugins, name));
  }
  const parent = await tempDir();
  const linked = join(parent, "plugins");
  await Deno.symlink(join(parent, "gone"), linked);
  await assertBlocked(
    linked,
    /the plugins dir "[^"]*plugins" could not be read: .*it is a link to/,
  );
  assert.equal((await validate(linked)).code, 1);
  // A plugins dir that does not exist at all holds no plugins.
  const missing = await pre(join(parent, "none"));
  assert.deepEqual([missing.code, missing.verdict], [0, { action: "allow", reason: "" }]);
  assert.equal((await validate(join(parent, "none"))).code, 0);
});

Deno.test(
  "tyhooks tool pre still allows when the manifests show no guard was lost: no hook configured means exactly that",
  async () => {
    const plugins = await makeTree({
      "notify/plugin.yaml": "name: notify\nhooks:\n  task.done: missing.sh\n  task.failed: f.sh\n",
      "notify/f.sh": GUARD,
      "gone/plugin.yaml": "name: gone\nhooks:\n  task.done: missing.sh\n",
      "empty/plugin.yaml": "name: empty\nhooks: {}\n",
      "bare/plugin.yaml": "name: bare\n",
    });
    const r = await pre(plugins);
    assert.deepEqual([r.code, r.verdict], [0, { action: "allow", reason: "" }], r.stderr);
  },
);

Deno.test("tyhooks tool pre runs a guard that was loaded, though another hook of its plugin was dropped", async () => {
  const plugins = await makeTree({
    "guard/plugin.yaml":
      "name: guard\nhooks:\n  pre_tool_call: guard.sh\n  task.done: missing.sh\n",
    "guard/guard.sh": '#!/bin/sh\necho \'{"action":"allow","reason":"fine"}\'\n',
  });
  const r = await pre(plugins);
  assert.deepEqual([r.code, r.verdict], [0, { action: "allow", reason: "fine" }], r.stderr);
});

Deno.test(
  "tyhooks tool pre does not even start a guard whose tools setting does not match",
  async () => {
    const trace = await tempDir();
    const plugins = await makeTree({
      "guard/plugin.yaml": [
        "name: guard",
        "hooks:",
        "  pre_tool_call: guard.sh",
        "  post_tool_call: guard.sh",
        "tyhooks:",
        '  pre_tool_call: {tools: "^(bash|write_file)$"}',
        '  post_tool_call: {tools: "^bash$"}',
        "",
      ].join("\n"),
      "guard/guard.sh": `#!/bin/sh\necho ran >> ${trace}/$TOOL\necho 'no' >&2\nexit 2\n`,
    });
    for (const tool of ["read_file", "bash_extra"]) {
      const r = await pre(plugins, tool);
      assert.deepEqual([r.code, r.verdict.action], [0, "allow"], r.stderr);
    }
    const post = await cli(["tool", "post", "--tool", "write_file", "--plugins-dir", plugins], {
      env: { TOOL: "post-write_file", TYHOOKS_NO_CACHE: "1" },
    });
    assert.equal(post.code, 0, post.stderr);
    const ran = await Array.fromAsync(Deno.readDir(trace));
    assert.deepEqual(ran.map((e) => e.name), [], "no hook ran for a tool it does not match");
    const blocked = await cli(["tool", "pre", "--tool", "write_file", "--plugins-dir", plugins], {
      env: { TOOL: "write_file", TYHOOKS_NO_CACHE: "1" },
    });
    assert.deepEqual([blocked.code, JSON.parse(blocked.stdout).reason], [2, "no"]);
    assert.equal(await Deno.readTextFile(join(trace, "write_file")), "ran\n");
    await Deno.remove(trace, { recursive: true });
  },
);

Deno.test(
  "tyhooks tool pre gives a guard its own timeout setting, which --timeout overrides",
  async () => {
    const plugins = await makeTree({
      "slow/plugin.yaml":
        "name: slow\nhooks:\n  pre_tool_call: slow.sh\ntyhooks:\n  pre_tool_call: {timeout: 300ms}\n",
      "slow/slow.sh": "#!/bin/sh\nexec sleep 30\n",
    });
    const own = await pre(plugins);
    assert.match(own.verdict.reason, /hook of plugin "slow" failed: timed out after 300 ms/);
    const explicit = await pre(plugins, "bash", "--timeout", "700ms");
    assert.match(explicit.verdict.reason, /timed out after 700 ms/);
  },
);

Deno.test("tyhooks tool pre --claude returns once a first guard blocks, ending a later hook that would run for 20 s", async () => {
  const trace = await tempDir();
  const plugins = await makeTree({
    // Blocks once b runs, so that b is surely running when the outcome settles.
    "a/plugin.yaml": "name: a\nhooks:\n  pre_tool_call: a.sh\n",
    "a/a.sh": `#!/bin/sh\nwhile [ ! -s ${trace}/b ]; do sleep 0.05; done\necho no >&2\nexit 2\n`,
    "b/plugin.yaml": "name: b\nhooks:\n  pre_tool_call: b.sh\n",
    "b/b.sh": `#!/bin/sh\necho $$ > ${trace}/b.tmp\nmv ${trace}/b.tmp ${trace}/b\nexec sleep 20\n`,
  });
  const started = performance.now();
  const r = await cli(
    ["tool", "pre", "--claude", "--timeout", "30s", "--plugins-dir", plugins],
    { stdin: CLAUDE_INPUT, env: { TYHOOKS_NO_CACHE: "1" } },
  );
  const elapsed = performance.now() - started;
  assert.deepEqual([r.code, r.stderr], [2, "no\n"]);
  // Deno's start on a busy machine included: far below the 20 s of the hook.
  assert.ok(elapsed < 12_000, `returned after ${Math.round(elapsed)} ms`);
  assert.ok(groupGone(Number(await Deno.readTextFile(join(trace, "b")))));
});

Deno.test("serve: a guard's manifest half-written during a reload blocks POST /v1/tool/pre until it is whole again", async () => {
  const { serveOn } = await import("./_serve.ts");
  const whole = "name: guard\nhooks:\n  pre_tool_call: guard.sh\n";
  const plugins = await makeTree({
    "guard/plugin.yaml": whole,
    "guard/guard.sh": '#!/bin/sh\necho \'{"action":"allow","reason":"fine"}\'\n',
  });
  const writeManifest = (text: string) =>
    Deno.writeTextFile(join(plugins, "guard/plugin.yaml"), text);
  await using d = await serveOn(plugins);
  /** Asks until `action` comes back, for at most 5 s; returns the last verdict. */
  const until = async (action: string) => {
    const end = Date.now() + 5000;
    let body: Record<string, unknown> = {};
    while (Date.now() < end) {
      body = (await d.call("POST", "/v1/tool/pre", { tool: "bash" })).body;
      if (body.action === action) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    return body;
  };
  assert.deepEqual(await until("allow"), { action: "allow", reason: "fine" });
  // Cut mid-value: the YAML does not parse, and its text names the guard's event.
  await writeManifest('name: guard\nhooks:\n  pre_tool_call: "gua');
  const blocked = await until("block");
  assert.equal(blocked.action, "block", d.stderr());
  assert.match(String(blocked.reason), /^Cannot trust the pre-tool-call hooks: /);
  await writeManifest(whole);
  assert.deepEqual(await until("allow"), { action: "allow", reason: "fine" });
  // Cut before the event's name: the prefix parses, its hooks no map.
  await writeManifest("name: guard\nhooks:\n  pre_to");
  const cut = await until("block");
  assert.match(String(cut.reason), /the "hooks" of the plugin in "[^"]*guard" is not a map/);
  await writeManifest(whole);
  assert.deepEqual(await until("allow"), { action: "allow", reason: "fine" });
  // Cut before `hooks`: the prefix parses and names no hook, but the plugin had a guard when
  // last loaded.
  await writeManifest("name: guard\n");
  const before = await until("block");
  assert.match(String(before.reason), /had a pre_tool_call hook when last loaded/, d.stderr());
  // Removing the hook on purpose is no load failure: allowed.
  await writeManifest("name: guard\nhooks: {}\n");
  assert.deepEqual(await until("allow"), { action: "allow", reason: "" });
});
