import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";

// `tyhooks plugins new <name> [flags] --dir <dir>`.
function pluginsNew(name: string, dir: string, ...flags: string[]) {
  return cli(["plugins", "new", name, ...flags, "--dir", dir]);
}

Deno.test("plugins new scaffolds a plugin that validates and whose every stub runs", async () => {
  const dir = await makeTree({});
  const hooks = "task.done,pre_tool_call,post_tool_call,task.route,task.placement,task.hosts";
  const made = await pluginsNew("demo", dir, "--hooks", hooks, "--actions", "sync");
  assert.equal(made.code, 0, made.stderr);
  const plugin = join(dir, "demo");
  const manifest = await Deno.readTextFile(join(plugin, "plugin.yaml"));
  assert.ok(manifest.startsWith("# yaml-language-server: $schema=./plugin.schema.json\n"));
  const schema = await cli(["plugins", "schema"]);
  assert.equal(await Deno.readTextFile(join(plugin, "plugin.schema.json")), schema.stdout);
  assert.match(await Deno.readTextFile(join(plugin, "README.md")), /tyhooks plugins validate/);
  const stat = await Deno.stat(join(plugin, "actions/sync.sh"));
  assert.equal(stat.mode! & 0o111, 0o111);

  const validate = await cli(["plugins", "validate", plugin]);
  assert.deepEqual(validate, {
    code: 0,
    stdout: `ok: 1 plugin in ${JSON.stringify(plugin)}\n`,
    stderr: "",
  });
  const common = ["--plugins-dir", dir, "--hooks-dir", join(dir, "none")];
  const env = { env: { XDG_CACHE_HOME: join(dir, ".cache") } };
  const action = await cli(["plugins", "run", "demo", "sync", ...common], env);
  assert.deepEqual(action, { code: 0, stdout: "sync: task none\n", stderr: "" });
  const fire = await cli(
    ["fire", "task.done", "--task-json", '{"id":7}', "--json", ...common],
    env,
  );
  assert.equal(fire.code, 0, fire.stderr);
  assert.deepEqual(JSON.parse(fire.stdout).runs.map((r: { exit_code: number }) => r.exit_code), [
    0,
  ]);
  const pre = await cli(["tool", "pre", "--tool", "bash", "--args", "{}", ...common], env);
  assert.equal(pre.code, 0, pre.stderr);
  assert.equal(JSON.parse(pre.stdout).action, "allow");
  const post = await cli(["tool", "post", "--tool", "bash", ...common], env);
  assert.equal(post.code, 0, post.stderr);
  const route = await cli(["route", "--task-json", '{"id":7}', ...common], env);
  assert.deepEqual(route, {
    code: 0,
    stdout: "",
    stderr: "tyhooks: info: No router decided: 1 router asked, none named a config dir or held\n",
  });
  const place = await cli(["place", "--task-json", '{"id":7}', ...common], env);
  assert.equal(place.code, 0, place.stderr);
  assert.equal(JSON.parse(place.stdout).target, "");
  const hosts = await cli(["hosts", "--task-json", '{"id":7}', ...common], env);
  if (hosts.code !== 64) { // `hosts` lands with the consult work
    assert.equal(hosts.code, 0, hosts.stderr);
    assert.deepEqual(JSON.parse(hosts.stdout), { hosts: [] });
  }
});

Deno.test("plugins new goes to the plugins dir by default, hooks task.done, and never overwrites", async () => {
  const root = await makeTree({});
  const first = await cli(["plugins", "new", "mine", "--plugins-dir", root]);
  assert.equal(first.code, 0, first.stderr);
  const list = await cli(["plugins", "list", "--json", "--plugins-dir", root]);
  const [plugin] = JSON.parse(list.stdout).plugins;
  assert.deepEqual(Object.keys(plugin.hooks), ["task.done"]);
  const again = await cli(["plugins", "new", "mine", "--plugins-dir", root]);
  assert.equal(again.code, 1);
  assert.match(again.stderr, /^tyhooks: Cannot create plugin "mine": ".*mine" exists\n/);
  for (
    const args of [["../up"], [".hidden"], ["ok", "--hooks", "a/b"], ["ok", "--actions", "x y"]]
  ) {
    const bad = await cli(["plugins", "new", ...args, "--plugins-dir", root]);
    assert.equal(bad.code, 64, args.join(" "));
  }
});

Deno.test("plugins new refuses a near miss of a known event with a did-you-mean, and writes nothing", async () => {
  const root = await makeTree({});
  for (
    const [hooks, meant] of [
      ["task.doen", "task.done"],
      ["task.done,pre_tool_cal", "pre_tool_call"],
      ["agent.promt", "agent.prompt"],
    ]
  ) {
    const r = await pluginsNew("typo", root, "--hooks", hooks);
    assert.equal(r.code, 64, r.stderr);
    assert.match(r.stderr, new RegExp(`Unknown event ".*" for flag "--hooks"`));
    assert.match(r.stderr, new RegExp(`hint: did you mean "${meant}"\\?`));
    await assert.rejects(Deno.stat(join(root, "typo")), Deno.errors.NotFound);
  }
});

Deno.test("plugins new hooks an agent event, and a custom event with a warning that only fire sends it", async () => {
  const root = await makeTree({});
  const made = await pluginsNew("own", root, "--hooks", "agent.session_start,deploy.finished");
  assert.equal(made.code, 0, made.stderr);
  assert.doesNotMatch(made.stderr, /agent\.session_start/);
  assert.match(made.stderr, /Event "deploy\.finished" is none that ty or tyhooks sends/);
  assert.match(made.stderr, /tyhooks fire deploy\.finished/);
  const validate = await cli(["plugins", "validate", join(root, "own")]);
  assert.equal(validate.code, 0, validate.stdout + validate.stderr);
});

Deno.test("plugins new --dir naming a file says it cannot create the plugin there, naming the flag", async () => {
  const root = await makeTree({ afile: "" });
  const r = await cli(["plugins", "new", "x", "--dir", join(root, "afile")]);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stderr, /Cannot create plugin "x" in ".*\/afile": /);
  assert.match(r.stderr, /hint: --dir/);
});

Deno.test("plugins new with --hooks empty and no --actions is a usage error (64), writing nothing", async () => {
  const root = await makeTree({});
  const r = await cli(["plugins", "new", "ok", "--hooks", "", "--dir", root]);
  assert.equal(r.code, 64, r.stderr);
  assert.match(r.stderr, /Plugin "ok" would have no hook and no action/);
  assert.deepEqual([...Deno.readDirSync(root)], []);
});
