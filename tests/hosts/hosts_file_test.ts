import assert from "node:assert/strict";
import { defaultProbe, parseHostsFile, readHostsFile } from "../../lib/hosts/hosts_file.ts";
import { HostsFileError, RunError } from "../../lib/errors.ts";
import { tempDir } from "../_cli.ts";

const SSH = ["ssh", "-o", "BatchMode=yes", "-o", "ConnectTimeout=2"];

Deno.test("parseHostsFile() reads names, workdirs and probe commands, skipping comments and blanks", () => {
  const text = [
    "# the fleet",
    "",
    "gpu-1 ~/work",
    "   # indented comment",
    "gpu-2\t/srv/ty",
    "user@10.0.0.7",
    "stub  ~/w  --  printf '%s' '{\"a\": 1}'  # sh sees this comment",
    "bare -- exit 3\r",
  ].join("\n") + "\n";
  const hosts = parseHostsFile(text, "hosts");
  assert.deepEqual(hosts.map((h) => [h.name, h.workdir, h.line]), [
    ["gpu-1", "~/work", 3],
    ["gpu-2", "/srv/ty", 5],
    ["user@10.0.0.7", "", 6],
    ["stub", "~/w", 7],
    ["bare", "", 8],
  ]);
  assert.deepEqual(hosts[0].probe, [...SSH, "gpu-1", "tyhooks", "probe"]);
  assert.deepEqual(hosts[2].probe, defaultProbe("user@10.0.0.7"));
  assert.deepEqual(hosts[3].probe, [
    "/bin/sh",
    "-c",
    "printf '%s' '{\"a\": 1}'  # sh sees this comment",
  ]);
  assert.deepEqual(hosts[4].probe, ["/bin/sh", "-c", "exit 3"], "CRLF accepted");
});

Deno.test("parseHostsFile() keeps a -- inside the probe command for sh", () => {
  const [host] = parseHostsFile("a -- ssh a -- tyhooks probe --workdir /x\n", "hosts");
  assert.deepEqual(host.probe, ["/bin/sh", "-c", "ssh a -- tyhooks probe --workdir /x"]);
});

Deno.test("parseHostsFile() of an empty file lists no host", () => {
  assert.deepEqual(parseHostsFile("\n# nothing yet\n", "hosts"), []);
});

function badLine(text: string): HostsFileError {
  try {
    parseHostsFile(text, "/etc/fleet/hosts");
  } catch (error) {
    assert.ok(error instanceof HostsFileError);
    return error;
  }
  throw new Error("no error");
}

Deno.test("parseHostsFile() rejects any other shape, naming FILE:LINE", () => {
  const cases: [string, number, RegExp][] = [
    ["a\nb ~/w extra\n", 2, /3 words before the probe command.*hint: put "--" before/],
    ["a\n\nb ~/w --\n", 3, /nothing after "--"/],
    ["b ~/w --   \n", 1, /nothing after "--"/],
    ["-- echo hi\n", 1, /no NAME before "--"/],
    ["a b c -- echo\n", 1, /3 words before the probe command: expected NAME \[WORKDIR\]/],
    ["-oProxyCommand=evil\n", 1, /host name "-oProxyCommand=evil" starts with "-"/],
    ["a\n# c\na -- true\n", 3, /host "a" is already listed on line 1/],
    ["a\0b\n", 1, /NUL byte/],
    ["-\x1b]0;T\x07\n", 1, /host name "-\\u001b\]0;T\\u0007" starts with "-"$/],
    ["gpu\x1b[31m ~/w\n", 1, /"gpu\\u001b\[31m" holds a control character$/],
    ["gpu ~/w\u009b\n", 1, /"~\/w\\u009b" holds a control character$/],
  ];
  for (const [text, line, message] of cases) {
    const error = badLine(text);
    assert.equal(error.line, line, text);
    assert.equal(error.path, "/etc/fleet/hosts");
    assert.ok(
      error.message.startsWith(`Invalid line in hosts file "/etc/fleet/hosts:${line}": `),
      error.message,
    );
    assert.match(error.message, message);
  }
});

Deno.test("readHostsFile() says which file it cannot read", async () => {
  await assert.rejects(
    () => readHostsFile("/nonexistent/hosts"),
    (error) =>
      error instanceof RunError &&
      /Cannot read hosts file "\/nonexistent\/hosts"/.test(error.message),
  );
});

Deno.test("readHostsFile() refuses probe commands from a file others could write, and reads plain names", async () => {
  const dir = await tempDir({ prefix: "tyhooks-hosts-" });
  const path = `${dir}/hosts`;
  await Deno.writeTextFile(path, "gpu-1 ~/work\ngpu-2 -- cat facts.json\n");
  await Deno.chmod(path, 0o666);
  await assert.rejects(
    readHostsFile(path),
    /Cannot run the probe command of ".*hosts:2": the file is writable by group or others \(mode 0666\)/,
  );
  if (Deno.uid() === 0) {
    await Deno.chmod(path, 0o644);
    await Deno.chown(path, 65534, null);
    await assert.rejects(readHostsFile(path), /is owned by user 65534/);
  }
  // Names alone only say where to look: ssh decides what runs there.
  await Deno.writeTextFile(path, "gpu-1 ~/work\n");
  await Deno.chmod(path, 0o666);
  assert.equal((await readHostsFile(path))[0].name, "gpu-1");
});

Deno.test("readHostsFile() refuses probe commands from a dir where others could put another file in its place", async () => {
  const dir = await tempDir({ prefix: "tyhooks-hosts-" });
  const path = `${dir}/hosts`;
  await Deno.writeTextFile(path, "gpu-2 -- cat facts.json\n");
  await Deno.chmod(path, 0o600);
  await Deno.chmod(dir, 0o777);
  await assert.rejects(
    readHostsFile(path),
    /Cannot run the probe command of ".*hosts:1": its dir can be changed: .* is writable by group or others and not sticky \(mode 0777\)/,
  );
  await Deno.chmod(dir, 0o1777); // Sticky, as /tmp: only the file's owner can replace it.
  assert.equal((await readHostsFile(path))[0].name, "gpu-2");
});
