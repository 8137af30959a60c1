import assert from "node:assert/strict";
import { join } from "node:path";
import { splitWords, SSH_OPTIONS, sshCommand } from "../../lib/hosts/ssh.ts";
import { defaultProbe, parseHostsFile } from "../../lib/hosts/hosts_file.ts";
import { RunError } from "../../lib/errors.ts";
import { cli, tempDir } from "../_cli.ts";

Deno.test("sshCommand() is plain ssh with BatchMode and a connect timeout when TYHOOKS_SSH is unset or blank", () => {
  assert.deepEqual(sshCommand(undefined), ["ssh", ...SSH_OPTIONS]);
  assert.deepEqual(sshCommand("  \t"), ["ssh", ...SSH_OPTIONS]);
  assert.deepEqual(SSH_OPTIONS, ["-o", "BatchMode=yes", "-o", "ConnectTimeout=2"]);
});

Deno.test("sshCommand() splits TYHOOKS_SSH as a shell splits words and puts its own options after", () => {
  assert.deepEqual(sshCommand(`/usr/bin/ssh -F '/etc/my fleet' -o "User=ty ops" -i\\ x`), [
    "/usr/bin/ssh",
    "-F",
    "/etc/my fleet",
    "-o",
    "User=ty ops",
    "-i x",
    ...SSH_OPTIONS,
  ]);
});

Deno.test("splitWords() handles adjacent quotes, escapes inside double quotes and empty words", () => {
  assert.deepEqual(splitWords(`a'b'"c" "x\\"y\\\\z" '' "it's"`), ["abc", 'x"y\\z', "", "it's"]);
  assert.deepEqual(splitWords("  one\t two\nthree  "), ["one", "two", "three"]);
});

Deno.test("splitWords() expands a leading ~ to $HOME, as the shell running GIT_SSH_COMMAND would", () => {
  const home = Deno.env.get("HOME")!;
  assert.deepEqual(splitWords("ssh -F ~/.ssh/fleet ~ a~b '~/x'"), [
    "ssh",
    "-F",
    `${home}/.ssh/fleet`,
    home,
    "a~b",
    "~/x",
  ]);
});

Deno.test("splitWords() refuses unclosed quotes and shell syntax it would not perform, naming the variable", () => {
  for (
    const [value, detail] of [
      ["ssh -F 'x", "unclosed single quote"],
      ['ssh -F "x', "unclosed double quote"],
      ["ssh \\", "it ends with a backslash"],
      ["ssh -F $HOME/x", 'unquoted "$"'],
      ["ssh | tee", 'unquoted "|"'],
      ['ssh "$(id)"', '"$" inside double quotes would be expanded'],
      ["ssh # comment", 'unquoted "#"'],
    ]
  ) {
    assert.throws(() => splitWords(value), (error: Error) => {
      assert.ok(error instanceof RunError);
      assert.equal(
        error.message,
        `Cannot use $TYHOOKS_SSH "${value}": ${detail} (hint: it is split into words as a shell ` +
          "does, without expansions; quote special characters)",
      );
      return true;
    });
  }
  assert.deepEqual(splitWords("ssh 'a|b' \\$x"), ["ssh", "a|b", "$x"]);
});

Deno.test("defaultProbe() and a hosts file's default probes go through the given ssh", () => {
  const ssh = ["ssh", "-F", "/f", ...SSH_OPTIONS];
  assert.deepEqual(defaultProbe("gpu-1", ssh), [...ssh, "gpu-1", "tyhooks", "probe"]);
  const [host] = parseHostsFile("gpu-1 ~/w\n", "hosts");
  assert.deepEqual(host.probe, [...sshCommand(), "gpu-1", "tyhooks", "probe"]);
});

Deno.test("tyhooks pick-host runs TYHOOKS_SSH's command for a host without a probe command", async () => {
  const dir = await tempDir();
  // A stand-in ssh that records its arguments and answers as `tyhooks probe` would.
  const facts = {
    hostname: "gpu-1",
    os: "linux",
    arch: "x86_64",
    cpus: 4,
    load_avg: [0, 0, 0],
    mem_total_bytes: 2 ** 34,
    mem_available_bytes: 2 ** 33,
    disk_free_bytes: 0,
    uptime_s: 1,
    version: "0.1.0",
  };
  const fake = join(dir, "fake ssh");
  await Deno.writeTextFile(
    fake,
    `#!/bin/sh\nprintf '%s\\n' "$@" > "$(dirname "$0")/args"\necho '${JSON.stringify(facts)}'\n`,
  );
  await Deno.chmod(fake, 0o755);
  await Deno.writeTextFile(join(dir, "hosts"), "gpu-1 ~/work\n");
  const r = await cli(["pick-host", "--hosts", join(dir, "hosts")], {
    env: { TYHOOKS_SSH: `'${fake}' -F "${dir}/ssh config"` },
  });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).target, "gpu-1");
  const args = (await Deno.readTextFile(join(dir, "args"))).trimEnd().split("\n");
  assert.deepEqual(args, [
    "-F",
    `${dir}/ssh config`,
    ...SSH_OPTIONS,
    "gpu-1",
    "tyhooks",
    "probe",
  ]);
  const bad = await cli(["pick-host", "--hosts", join(dir, "hosts")], {
    env: { TYHOOKS_SSH: "ssh -F 'x" },
  });
  assert.equal(bad.code, 1);
  assert.match(
    bad.stderr,
    /^tyhooks: Cannot use \$TYHOOKS_SSH "ssh -F 'x": unclosed single quote/,
  );
});
