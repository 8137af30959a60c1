/**
 * ty's decisions through the CLI: handlers started together and decided in
 * plugin-name order as ty's one-after-another loop decides, placement's deliberate local answer,
 * Go's reading of JSON, route's guard, `~` expansion and KEY=VALUE line cutting, and
 * `tyhooks hosts`.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, type CliOptions, makeTree, shScript, startupMs, tempDir } from "../_cli.ts";
import { assertPlaced, pluginsHandling } from "./_trees.ts";

/** `tyhooks ARGS`, its index cache off: nothing written to the real cache. */
const run = (args: string[], options: CliOptions = {}) =>
  cli(args, { ...options, env: { TYHOOKS_NO_CACHE: "1", ...options.env } });

const json = (text: string) => `#!/bin/sh\ncat >/dev/null\necho '${text}'\n`;

Deno.test(
  "tyhooks place: a slow handler that then answers nothing does not keep the next one's target away (ty's decision, in under one timeout)",
  async () => {
    const plugins = await pluginsHandling("task.placement", {
      a: "#!/bin/sh\ncat >/dev/null\nsleep 2\n",
      b: json('{"target":"gpu-1"}'),
    });
    const startup = await startupMs(["place", "--plugins-dir", await makeTree({})]);
    const started = performance.now();
    const r = await run(["place", "--plugins-dir", plugins]);
    const elapsed = performance.now() - started;
    assertPlaced(r, { target: "gpu-1", handler: "b" });
    assert.ok(
      elapsed < startup + 5000,
      `returned after ${Math.round(elapsed)} ms, ${
        Math.round(startup)
      } of them starting: not within one timeout`,
    );
  },
);

Deno.test(
  "tyhooks place: the earlier handler's target wins even when a later one answers first",
  async () => {
    const plugins = await pluginsHandling("task.placement", {
      a: `#!/bin/sh\ncat >/dev/null\nsleep 1.5\necho '{"target":"host-a"}'\n`,
      b: json('{"target":"host-b"}'),
    });
    const r = await run(["place", "--plugins-dir", plugins]);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).target, "host-a");
    assert.equal(JSON.parse(r.stdout).handler, "a");
    const sequential = await run(["place", "--sequential", "--plugins-dir", plugins]);
    assert.equal(JSON.parse(sequential.stdout).target, "host-a");
  },
);

Deno.test(
  "tyhooks place: exit 0 with empty stdout is a deliberate local answer naming its handler, kept only when nobody names a target",
  async () => {
    const silent = "#!/bin/sh\ncat >/dev/null\n";
    const local = await pluginsHandling("task.placement", {
      a: silent,
      b: json('{"target":"","reason":"b says local"}'),
    });
    const r = await run(["place", "--plugins-dir", local]);
    assert.deepEqual(JSON.parse(r.stdout), { target: "", workdir: "", reason: "", handler: "a" });
    const remote = await pluginsHandling("task.placement", {
      a: silent,
      b: json('{"target":"gpu-2"}'),
    });
    const placed = await run(["place", "--plugins-dir", remote]);
    assert.equal(JSON.parse(placed.stdout).target, "gpu-2");
  },
);

Deno.test(
  "tyhooks place reads answers as Go's encoding/json does: keys in any case, null as empty",
  async () => {
    const plugins = await pluginsHandling("task.placement", {
      a: json("null"),
      b: json('{"Target":"gpu-3","WORKDIR":"~/w","reason":null}'),
    });
    const r = await run(["place", "--plugins-dir", plugins]);
    assertPlaced(r, { target: "gpu-3", workdir: "~/w", handler: "b" });
    const local = await pluginsHandling("task.placement", { a: json("null") });
    const answer = await run(["place", "--plugins-dir", local]);
    assert.equal(answer.stderr, "");
    assert.deepEqual(JSON.parse(answer.stdout), {
      target: "",
      workdir: "",
      reason: "",
      handler: "a",
    });
  },
);

Deno.test(
  "tyhooks route asks no router for a task ty would not route, says why at debug level, and --force asks anyway",
  async () => {
    const trace = await tempDir();
    const plugins = await pluginsHandling("task.route", {
      r: `#!/bin/sh\ntouch ${trace}/ran\necho CLAUDE_CONFIG_DIR=/p/r\n`,
    });
    const ran = () => Deno.stat(join(trace, "ran")).then(() => true, () => false);
    for (const task of [{ executor: "codex" }, { claude_config_dir: "/p/mine" }]) {
      const r = await run([
        "route",
        "--log-level",
        "debug",
        "--task-json",
        JSON.stringify(task),
        "--plugins-dir",
        plugins,
      ]);
      assert.deepEqual([r.code, r.stdout], [0, ""]);
      assert.match(r.stderr, /Routers not asked: the task/);
      assert.equal(await ran(), false, JSON.stringify(task));
    }
    for (const task of [{ executor: "claude", claude_config_dir: "  " }, { executor: "" }]) {
      const r = await run(["route", "--task-json", JSON.stringify(task), "--plugins-dir", plugins]);
      assert.match(r.stdout, /^PLUGIN=r\nCLAUDE_CONFIG_DIR=\/p\/r\n/, JSON.stringify(task));
    }
    const forced = await run([
      "route",
      "--force",
      "--task-json",
      '{"executor":"codex"}',
      "--plugins-dir",
      plugins,
    ]);
    assert.match(forced.stdout, /^PLUGIN=r\n/);
    await Deno.remove(trace, { recursive: true });
  },
);

Deno.test(
  "tyhooks route expands a leading ~ in the answered dir to $HOME, then cleans it",
  async () => {
    const home = await tempDir();
    const plugins = await pluginsHandling("task.route", {
      r: "#!/bin/sh\necho 'CLAUDE_CONFIG_DIR=~/.claude-work/'\n",
    });
    const r = await run(["route", "--json", "--plugins-dir", plugins], { env: { HOME: home } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).claude_config_dir, `${home}/.claude-work`);
    await Deno.remove(home, { recursive: true });
  },
);

Deno.test(
  "tyhooks route cuts a KEY=VALUE value at the first line-end character, so no line can be injected",
  async () => {
    for (const end of ["\\r", "\\v", "\\f", "\\034", "\\302\\205", "\\342\\200\\250"]) {
      const plugins = await pluginsHandling("task.route", {
        r: `#!/bin/sh\nprintf 'CLAUDE_CONFIG_DIR=/p/r\\nREASON=ok${end}HOLD=1${end}x\\n'\n`,
      });
      const r = await run(["route", "--plugins-dir", plugins]);
      assert.equal(r.code, 0, r.stderr);
      assert.equal(r.stdout, "PLUGIN=r\nCLAUDE_CONFIG_DIR=/p/r\nREASON=ok\n", end);
      assert.match(r.stderr, /Cut REASON at a line-end character/, end);
    }
  },
);

Deno.test(
  "tyhooks hosts merges every handler's list in plugin-name order: trimmed, target and name filled, empty entries dropped, a duplicate target keeping the first",
  async () => {
    const trace = await tempDir();
    const plugins = await pluginsHandling("task.hosts", {
      "b-fleet":
        `#!/bin/sh\ncat > ${trace}/request\necho "$TASK_EVENT" > ${trace}/event\necho '{"hosts":[{"name":"gpu-1","target":"","detail":"from b"},{"target":"cpu-9"}]}'\n`,
      "a-fleet": json(
        '{"Hosts":[{"name":" GPU one ","target":" gpu-1 ","workdir":" ~/src ","detail":" big "},{"name":"","target":""},null,{"name":"laptop"}]}',
      ),
      "c-broken": json("{nope"),
      "d-silent": "#!/bin/sh\ncat >/dev/null\n",
    });
    const r = await run([
      "hosts",
      "--task-json",
      '{"title":"Train","project":"ml"}',
      "--plugins-dir",
      plugins,
    ]);
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      hosts: [
        { name: "GPU one", target: "gpu-1", workdir: "~/src", detail: "big" },
        { name: "laptop", target: "laptop", workdir: "", detail: "" },
        { name: "cpu-9", target: "cpu-9", workdir: "", detail: "" },
      ],
    });
    assert.match(r.stderr, /Hosts handler "c-broken" failed: malformed JSON/);
    const request = JSON.parse(await Deno.readTextFile(join(trace, "request")));
    assert.equal(request.event, "task.hosts");
    assert.equal(request.task.title, "Train");
    assert.equal(await Deno.readTextFile(join(trace, "event")), "task.hosts\n");
    const none = await run(["hosts", "--plugins-dir", await makeTree({})]);
    assert.deepEqual([none.code, JSON.parse(none.stdout)], [0, { hosts: [] }]);
    await Deno.remove(trace, { recursive: true });
  },
);

Deno.test(
  "tyhooks pick-host --from-hosts-hook probes the task.hosts candidates with TYHOOKS_SSH and ranks them, workdirs kept",
  async () => {
    const dir = await tempDir();
    const GiB = 2 ** 30;
    // A stand-in ssh: `ssh -o BatchMode=yes -o ConnectTimeout=2 TARGET tyhooks probe`.
    const fake = join(dir, "fake-ssh");
    await Deno.writeTextFile(
      fake,
      shScript(
        'while [ "$1" = -o ]; do shift 2; done',
        'echo "$1" >> "$(dirname "$0")/probed"',
        "case $1 in gpu-1) mem=4;; gpu-2) mem=12;; cpu-3) mem=8;; *) exit 255;; esac",
        `printf '{"hostname":"%s","os":"linux","arch":"x86_64","cpus":4,"load_avg":[0.5,0.2,0.1],"mem_total_bytes":${
          32 * GiB
        },"mem_available_bytes":%s,"disk_free_bytes":1,"uptime_s":1,"version":"0.1.0"}\\n' "$1" $((mem * ${GiB}))`,
      ),
    );
    await Deno.chmod(fake, 0o755);
    const plugins = await pluginsHandling("task.hosts", {
      "a-fleet": json(
        '{"hosts":[{"name":"gpu-1","workdir":"~/a"},{"target":"gpu-2","workdir":"~/a2"}]}',
      ),
      "b-fleet": json(
        '{"hosts":[{"target":"gpu-2","workdir":"~/b"},{"name":"cpu-3"},{"target":"-oProxyCommand=x"}]}',
      ),
    });
    const r = await run(["pick-host", "--from-hosts-hook", "--plugins-dir", plugins], {
      env: { TYHOOKS_SSH: fake },
    });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), {
      target: "gpu-2",
      workdir: "~/a2",
      reason: "most free memory: 12.0 GiB of 32.0 GiB",
    });
    const probed = (await Deno.readTextFile(join(dir, "probed"))).trim().split("\n").sort();
    assert.deepEqual(probed, ["cpu-3", "gpu-1", "gpu-2"]);
    assert.match(r.stderr, /Host "-oProxyCommand=x" skipped/);
    const both = await run(["pick-host", "--from-hosts-hook", "--hosts", fake]);
    assert.equal(both.code, 64);
    await Deno.remove(dir, { recursive: true });
  },
);
