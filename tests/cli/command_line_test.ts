/**
 * The conventions every command keeps (SPEC "Command line"), through the real CLI.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, withTree } from "../_cli.ts";
import { COMMANDS } from "../../lib/cli/commands.ts";
import { EXIT } from "../../lib/cli/types.ts";

const ENV = { TYHOOKS_NO_CACHE: "1" };

Deno.test("a string flag takes the next word as its value even when it starts with -", async () => {
  await withTree({
    "post.sh": '#!/bin/sh\ncat > "$(dirname "$0")/request.json"\n',
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: done.sh\n",
    "p/done.sh": '#!/bin/sh\nprintf %s "$TASK_MESSAGE" > ../message.txt\n',
  }, async (dir) => {
    const post = await cli([
      "tool",
      "post",
      "--tool",
      "bash",
      "--error",
      "-bash: foo: command not found",
      "--result",
      "-1",
      "--post-hook",
      join(dir, "post.sh"),
      "--plugins-dir",
      join(dir, "none"),
    ], { env: ENV });
    assert.equal(post.code, 0, post.stderr);
    const request = JSON.parse(await Deno.readTextFile(join(dir, "request.json")));
    assert.equal(request.error, "-bash: foo: command not found");
    assert.equal(request.result, "-1");
    const fire = await cli(
      ["fire", "task.done", "--message", "-- see log", "--plugins-dir", dir],
      { env: ENV },
    );
    assert.equal(fire.code, 0, fire.stderr);
    assert.equal(await Deno.readTextFile(join(dir, "message.txt")), "-- see log");
    const glued = await cli(
      ["fire", "task.done", "--message=--x=y", `--plugins-dir=${dir}`],
      { env: ENV },
    );
    assert.equal(glued.code, 0, glued.stderr);
    assert.equal(await Deno.readTextFile(join(dir, "message.txt")), "--x=y");
  });
});

Deno.test("a string flag at the end of the line says its value is missing, exit 64", async () => {
  const r = await cli(["fire", "task.done", "--message"]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Missing value for flag "--message"/);
});

Deno.test("unknown commands and flags get a did-you-mean and exit 64", async () => {
  const cases: [string[], RegExp][] = [
    [
      ["plugins", "lst"],
      /Unknown command "plugins lst"\nhint: did you mean "tyhooks plugins list"\?/,
    ],
    [["serv"], /Unknown command "serv"\nhint: did you mean "tyhooks serve"\?/],
    [
      ["plugins", "--plugin-dir", "/x"],
      /Unknown flag "--plugin-dir"\nhint: did you mean "--plugins-dir"\?/,
    ],
    // Before the command too: the flag, not its value, is what was mistyped.
    [
      ["--plugin-dir", "/x", "plugins"],
      /Unknown flag "--plugin-dir"\nhint: did you mean "--plugins-dir"\?/,
    ],
    [["fire", "task.done", "--jsn"], /Unknown flag "--jsn"\nhint: did you mean "--json"\?/],
    [["tool", "pree"], /Unknown command "tool pree"\nhint: did you mean "tyhooks tool pre"\?/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args);
    assert.equal(r.code, 64, args.join(" "));
    assert.equal(r.stdout, "");
    assert.match(r.stderr, message);
  }
});

Deno.test("-v, version and --verison get a did-you-mean for --version, exit 64", async () => {
  const cases: [string[], RegExp][] = [
    [["-v"], /Unknown flag "-v"\nhint: did you mean "-V"\?/],
    [["version"], /Unknown command "version"\nhint: did you mean "tyhooks --version"\?/],
    [["verison"], /Unknown command "verison"\nhint: did you mean "tyhooks --version"\?/],
    [["--verison"], /Unknown flag "--verison"\nhint: did you mean "--version"\?/],
    [
      ["--plugins-dir", "/x", "--verison"],
      /Unknown flag "--verison"\nhint: did you mean "--version"\?/,
    ],
    [["tool", "-v"], /Unknown flag "-v"\nhint: did you mean "-V"\?/],
    [["route", "-v"], /Unknown flag "-v"\nhint: did you mean "-V"\?/],
  ];
  for (const [args, message] of cases) {
    const r = await cli(args);
    assert.equal(r.code, 64, args.join(" "));
    assert.equal(r.stdout, "", args.join(" "));
    assert.match(r.stderr, message, args.join(" "));
  }
});

Deno.test("a group word alone does what its default command does: plugins lists, services lists", async () => {
  await withTree({
    "p/plugin.yaml": "name: p\nhooks:\n  task.done: done.sh\n",
    "p/done.sh": "#!/bin/sh\n",
  }, async (dir) => {
    const list = await cli(["plugins", "list", "--plugins-dir", dir], { env: ENV });
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /task\.done/);
    for (const words of [["plugins"], ["plugins", "ls"]]) {
      const r = await cli([...words, "--plugins-dir", dir], { env: ENV });
      assert.deepEqual(r, list, words.join(" "));
    }
    const services = await cli(["services", "--json", "--plugins-dir", dir], { env: ENV });
    assert.equal(services.code, 0, services.stderr);
    assert.deepEqual(JSON.parse(services.stdout), { services: [] });
  });
});

Deno.test("a group without a default command prints its commands: on stdout with --help, else exit 64", async () => {
  const help = await cli(["tool", "--help"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /tool pre +ask pre_tool_call hooks/);
  const bare = await cli(["tool"]);
  assert.equal(bare.code, 64);
  assert.equal(bare.stdout, "");
  assert.match(bare.stderr, /tool post/);
});

Deno.test("plugins rm and plugins uninstall remove a plugin as plugins remove does", async () => {
  for (const alias of ["rm", "uninstall"]) {
    await withTree({
      "p/plugin.yaml": "name: p\nhooks:\n  task.done: d.sh\n",
      "p/d.sh": "#!/bin/sh\n",
    }, async (dir) => {
      const r = await cli(["plugins", alias, "p", "--plugins-dir", dir], { env: ENV });
      assert.equal(r.code, 0, r.stderr);
      await assert.rejects(Deno.stat(join(dir, "p")), Deno.errors.NotFound);
    });
  }
});

Deno.test("help, --help, -h, --version and -V work anywhere on the line", async () => {
  const version = await cli(["--version"]);
  assert.match(version.stdout, /^tyhooks \d+\.\d+\.\d+\n$/);
  for (
    const args of [["-V"], ["fire", "task.done", "--version"], ["plugins", "list", "-V"], [
      "--plugins-dir",
      "/x",
      "-V",
    ]]
  ) {
    const r = await cli(args);
    assert.deepEqual(r, { ...version }, args.join(" "));
  }
  const help = await cli(["help", "fire"]);
  assert.equal(help.code, 0);
  assert.match(help.stdout, /^Usage: tyhooks fire <event>/);
  for (
    const args of [["fire", "--help"], ["fire", "task.done", "-h"], [
      "--log-level",
      "debug",
      "help",
      "fire",
    ]]
  ) {
    assert.deepEqual(await cli(args), help, args.join(" "));
  }
  // A flag's value is a value, even when it reads "--help".
  await withTree({}, async (dir) => {
    const r = await cli(["fire", "task.done", "--message", "--help", "--plugins-dir", dir], {
      env: ENV,
    });
    assert.equal(r.code, 0);
    assert.equal(r.stdout, "");
  });
  const top = await cli(["help"]);
  assert.equal(top.code, 0);
  assert.match(top.stdout, /^Usage: tyhooks /);
  const unknown = await cli(["help", "fier"]);
  assert.equal(unknown.code, 64);
  assert.match(unknown.stderr, /did you mean "tyhooks fire"/);
});

Deno.test("every command's help fits 80 columns when piped, has no empty section and ends with examples", async () => {
  const texts = [(await cli(["--help"])).stdout, (await cli(["help", "plugins"])).stdout];
  for (const entry of COMMANDS) {
    const r = await cli(["help", ...entry.name.split(" ")]);
    assert.equal(r.code, 0, entry.name);
    assert.match(r.stdout, /\nExamples:\n( {2}\S.*\n)+$/, entry.name);
    texts.push(r.stdout);
  }
  for (const text of texts) {
    const lines = text.split("\n");
    for (const line of lines) assert.ok(line.length <= 80 || /^ {2}tyhooks /.test(line), line);
    lines.forEach((line, i) => {
      if (line.endsWith(":") && /^[A-Z]/.test(line)) assert.notEqual(lines[i + 1] ?? "", "", line);
    });
  }
});

Deno.test("help prose is wrapped at word boundaries: a line ends only where the next word does not fit", async () => {
  const texts = [
    (await cli(["--help"])).stdout,
    ...await Promise.all(
      ["plugins", "tool", "services"].map(async (g) => (await cli([g, "--help"])).stdout),
    ),
  ];
  for (const entry of COMMANDS) texts.push((await cli(["help", ...entry.name.split(" ")])).stdout);
  let paragraphs = 0;
  for (const text of texts) {
    for (const block of text.split("\n\n")) {
      const lines = block.split("\n").filter((line) => line !== "");
      // Usage lines, option and command tables, examples: not prose.
      if (lines.length === 0 || /^(Usage: |\s)/.test(lines[0]) || lines[0].endsWith(":")) continue;
      paragraphs++;
      for (const line of lines) {
        const quotes = line.split('"').length - 1;
        assert.ok(quotes % 2 === 0, `a quoted span breaks after ${JSON.stringify(line)}`);
      }
      lines.slice(1).forEach((line, i) => {
        assert.ok(!line.startsWith(" "), `indented line in a paragraph: ${JSON.stringify(line)}`);
        // The next word, or the quoted span it opens: both are kept whole.
        const next = /^(?:[^\s"]|"[^"]*")+/.exec(line)?.[0] ?? "";
        assert.ok(
          lines[i].length + 1 + next.length > 80,
          `"${next}" fits after ${JSON.stringify(lines[i])}`,
        );
      });
    }
  }
  assert.ok(paragraphs > COMMANDS.length, `${paragraphs} paragraphs checked`);
});

Deno.test("--help and README's \"Exit codes\" list exactly the exit-code table's codes, signals as 129/130/131/143", async () => {
  const codes = Object.values(EXIT).map((e) => e.code).sort((a, b) => a - b);
  const readme = await Deno.readTextFile(new URL("../../README.md", import.meta.url));
  const section = /### Exit codes\n\n([\s\S]*?)\n\n/.exec(readme)?.[1];
  assert.ok(section, 'README has an "Exit codes" paragraph');
  const help = /Exit codes: ([\s\S]*?)\n\n/.exec((await cli(["--help"])).stdout)?.[1];
  assert.ok(help, '--help has an "Exit codes" paragraph');
  for (const [where, text] of [["README", section], ["--help", help]]) {
    const listed = [...text.matchAll(/\b\d+\b/g)].map((m) => Number(m[0])).sort((a, b) => a - b);
    assert.deepEqual(listed, codes, where);
    assert.match(
      text.replaceAll("\n", " "),
      /129\/130\/131\/143 interrupted by SIGHUP\/SIGINT\/SIGQUIT\/SIGTERM/,
      where,
    );
  }
});

Deno.test("tool post --help says what a failing post hook does, and it does it: exit 0, with --claude at once", async () => {
  const help = (await cli(["tool", "post", "--help"])).stdout.replaceAll(/\s+/g, " ");
  assert.doesNotMatch(help, /2 to block/);
  assert.match(help, /--claude +be a Claude Code PostToolUse hook, .*exit 0 at once/);
  assert.match(help, /A failing hook is logged as a warning, never fatal: exit 0\./);
  assert.match(help, /--on-failure block\|allow +accepted for symmetry with tool pre/);
  await withTree({
    "fail.sh": "#!/bin/sh\nexit 1\n",
    "block.sh": "#!/bin/sh\necho no >&2\nexit 2\n",
  }, async (dir) => {
    const hooks = ["--post-hook", join(dir, "fail.sh"), "--post-hook", join(dir, "block.sh")];
    const common = [...hooks, "--plugins-dir", join(dir, "none")];
    const plain = await cli(["tool", "post", "--tool", "bash", ...common], { env: ENV });
    assert.equal(plain.code, 0, plain.stderr);
    assert.match(plain.stderr, /warn: .*fail\.sh" failed: exited 1/);
    assert.match(plain.stderr, /warn: .*block\.sh" failed: exited 2/);
    const stdin = JSON.stringify({
      hook_event_name: "PostToolUse",
      tool_name: "Bash",
      tool_input: { command: "ls" },
      tool_response: "a b",
      session_id: "s",
    });
    const claude = await cli(["tool", "post", "--claude", ...common], { env: ENV, stdin });
    assert.deepEqual(claude, { code: 0, stdout: "", stderr: "" });
  });
});

Deno.test("--json is accepted by every command whose output is always JSON, and changes nothing", async () => {
  await withTree({}, async (dir) => {
    const common = ["--plugins-dir", dir];
    for (const args of [["place"], ["tool", "pre", "--tool", "bash"], ["plugins", "schema"]]) {
      const plain = await cli([...args, ...common], { env: ENV });
      const json = await cli([...args, ...common, "--json"], { env: ENV });
      assert.equal(json.code, 0, json.stderr);
      assert.equal(json.stdout, plain.stdout, args.join(" "));
      JSON.parse(json.stdout);
    }
    const probe = await cli(["probe", "--json", "--workdir", dir]);
    assert.equal(probe.code, 0, probe.stderr);
    assert.equal(typeof JSON.parse(probe.stdout).hostname, "string");
    await Deno.writeTextFile(join(dir, "hosts"), "");
    const pick = await cli(["pick-host", "--hosts", join(dir, "hosts"), "--json"]);
    assert.equal(pick.code, 0, pick.stderr);
    assert.equal(JSON.parse(pick.stdout).target, "");
  });
});

Deno.test("a file named by a flag that does not exist is a usage error, exit 64, for every such flag", async () => {
  const cases = [
    ["fire", "task.done", "--task", "/nonexistent/task.json"],
    ["pick-host", "--hosts", "/nonexistent/hosts"],
    ["serve", "--listen", "127.0.0.1:0", "--token-file", "/nonexistent/token"],
  ];
  for (const args of cases) {
    const r = await cli(args);
    assert.equal(r.code, 64, `${args.join(" ")}: ${r.stderr}`);
    assert.match(
      r.stderr,
      /File "\/nonexistent\/\w+(\.json)?" given to "--[a-z-]+" does not exist/,
    );
  }
});

Deno.test("--json is accepted by the commands that print no document too: tool post still runs its hooks", async () => {
  await withTree({
    "p/plugin.yaml": "name: p\nhooks:\n  post_tool_call: post.sh\n",
    "p/post.sh": '#!/bin/sh\ncat > "$(dirname "$0")/seen"\n',
  }, async (dir) => {
    const post = await cli(["tool", "post", "--tool", "bash", "--json", "--plugins-dir", dir], {
      env: ENV,
    });
    assert.equal(post.code, 0, post.stderr);
    assert.equal(JSON.parse(await Deno.readTextFile(join(dir, "p", "seen"))).tool, "bash");
    const where = await cli(["plugins", "dir", "--json", "--plugins-dir", dir], { env: ENV });
    assert.equal(where.code, 0, where.stderr);
    assert.equal(where.stdout, `${dir}\n`);
  });
});

Deno.test("an empty --plugins-dir or --hooks-dir is a usage error, not the current directory", async () => {
  for (
    const args of [["--plugins-dir=", "plugins", "dir"], ["plugins", "list", "--hooks-dir", ""]]
  ) {
    const r = await cli(args, { env: ENV });
    assert.equal(r.code, 64, args.join(" "));
    assert.match(r.stderr, /needs a directory, not an empty value/);
  }
});

Deno.test("a line with no command says so first, and under --log-format json as one JSON line, exit 64", async () => {
  const text = await cli(["tool"]);
  assert.equal(text.code, 64);
  assert.match(text.stderr, /^tyhooks: No command given after "tool"\n\nUsage: tyhooks tool /);
  for (const line of [["--log-format", "json", "tool"], ["--log-format", "json"]]) {
    const r = await cli(line);
    assert.equal(r.code, 64, r.stderr);
    const lines = r.stderr.trimEnd().split("\n");
    assert.equal(lines.length, 1, r.stderr);
    const logged = JSON.parse(lines[0]);
    assert.equal(logged.level, "error");
    assert.match(logged.msg, /^No command given/);
    assert.match(logged.hint, /^see tyhooks help/);
  }
});
