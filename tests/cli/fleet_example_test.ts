import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree, ROOT } from "../_cli.ts";

const EXAMPLES = join(ROOT, "plugins-example");

Deno.test("the example fleet plugin answers task.hosts from the hosts file place.sh picks from", async () => {
  const home = await makeTree({});
  const r = await cli(["hosts", "--task-json", '{"title":"Train"}', "--plugins-dir", EXAMPLES], {
    env: { XDG_CACHE_HOME: join(home, "cache") },
  });
  assert.equal(r.code, 0, r.stderr);
  const hostsFile = await Deno.readTextFile(join(EXAMPLES, "fleet-placement/hosts"));
  const names = hostsFile.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#"))
    .map((l) => l.split(/\s+/)[0]);
  assert.deepEqual(names, ["gpu-1", "gpu-2", "build-1", "gpu-3"]);
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(doc.hosts.map((h: { target: string }) => h.target), names);
  assert.deepEqual(doc.hosts[2], {
    name: "build-1",
    target: "build-1",
    workdir: "/srv/ty",
    detail: `hosts file line ${
      hostsFile.split("\n").findIndex((l) => l.startsWith("build-1")) + 1
    }`,
  });
});
