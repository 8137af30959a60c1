import assert from "node:assert/strict";
import { PROBE_FIELDS as FIELDS } from "./_probe_fields.ts";
import { HostFactsSchema } from "../../lib/wire/host_facts.ts";
import { diskFree, parseDfOutput, probeHost } from "../../lib/hosts/probe.ts";
import { createLogger } from "../../lib/log.ts";
import { VERSION } from "../../lib/version.ts";
import { tempDir, valueIn } from "../_cli.ts";

Deno.test("probeHost() describes this machine with answers its own schema accepts", async () => {
  const facts = HostFactsSchema.parse(await probeHost({ workdir: "/" }));
  assert.deepEqual(Object.keys(facts), FIELDS);
  assert.ok(facts.cpus > 0);
  assert.ok(facts.mem_total_bytes > 0 && facts.mem_available_bytes > 0);
  assert.ok(facts.mem_available_bytes <= facts.mem_total_bytes);
  assert.ok(facts.disk_free_bytes > 0, "df of / was measured");
  assert.equal(facts.hostname, Deno.hostname());
  assert.equal(facts.version, VERSION);
});

Deno.test("probeHost() reports 0 free disk and a warning when the workdir does not exist", async () => {
  const lines: string[] = [];
  const facts = await probeHost({
    workdir: "/nonexistent/tyhooks-dir",
    log: createLogger({ write: (line) => lines.push(line) }),
  });
  assert.equal(facts.disk_free_bytes, 0);
  assert.ok(facts.mem_total_bytes > 0, "the other facts are still there");
  assert.equal(lines.length, 1);
  assert.match(
    lines[0],
    /warn: Cannot measure free disk of "\/nonexistent\/tyhooks-dir": df exited/,
  );
});

Deno.test("diskFree() measures a directory whose name looks like a flag", async () => {
  const dir = await tempDir();
  await Deno.mkdir(`${dir}/-h`);
  // Relative to the cwd, which only a child may have elsewhere: tests share one process.
  assert.equal(
    typeof await valueIn({ diskFree: "lib/hosts/probe.ts" }, 'diskFree("-h")', { cwd: dir }),
    "number",
  );
  assert.match(String(await diskFree("-h")), /df exited 1: .*No such file/);
});

Deno.test("parseDfOutput() reads available blocks whatever the names around them hold", () => {
  const header = "Filesystem     1024-blocks     Used Available Capacity Mounted on\n";
  assert.equal(
    parseDfOutput(header + "/dev/vda 264212084 22880912 83510000 22% /\n"),
    83510000 * 1024,
  );
  assert.equal(
    parseDfOutput(header + "map auto_home 0 0 0 100% /System/Volumes/Data/home 2 3 4 5%\n"),
    0,
    "a file system name with spaces and a mount point with numbers",
  );
  assert.equal(parseDfOutput(header + "tmpfs 10 - 7 - /mnt/my disk\r\n"), 7 * 1024);
  assert.match(String(parseDfOutput("")), /unexpected df output/);
  assert.match(String(parseDfOutput(header + "/dev/x 1 2 - 3% /\n")), /unexpected df output/);
  assert.match(String(parseDfOutput(header + "garbage\n")), /unexpected df output: "garbage"/);
});

Deno.test("probeHost() measures $HOME when no workdir is given", async () => {
  const lines = await valueIn(
    { probeHost: "lib/hosts/probe.ts", createLogger: "lib/log.ts" },
    "(async () => { const lines = []; " +
      "await probeHost({ log: createLogger({ write: (line) => lines.push(line) }) }); " +
      "return lines; })()",
    { env: { HOME: "/nonexistent/home" } },
  ) as string[];
  assert.match(lines.join(""), /Cannot measure free disk of "\/nonexistent\/home"/);
});
