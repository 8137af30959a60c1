import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";

async function plugins(): Promise<string> {
  return await makeTree({
    "b-search/plugin.yaml": "name: b-search\nservices:\n" +
      "  - name: index\n    command: touch started && exec ./server --port 7000\n" +
      '    cwd: data\n    env: ["FOO=bar"]\n    restart: always\n' +
      "  - name: watch\n    command: ./watch.sh\n",
    "b-search/data/.keep": "",
    "a-hooks/plugin.yaml": "name: a-hooks\nhooks:\n  task.done: done.sh\n",
    "a-hooks/done.sh": "#!/bin/sh\n",
  });
}

Deno.test("services list --json prints SPEC's shape and starts nothing", async () => {
  const dir = await Deno.realPath(await plugins());
  const r = await cli(["services", "list", "--json", "--plugins-dir", dir]);
  assert.equal(r.code, 0, r.stderr);
  const doc = JSON.parse(r.stdout);
  assert.deepEqual(doc, {
    services: [
      {
        plugin: "b-search",
        name: "index",
        command: "touch started && exec ./server --port 7000",
        cwd: join(dir, "b-search", "data"),
        restart: "always",
      },
      {
        plugin: "b-search",
        name: "watch",
        command: "./watch.sh",
        cwd: join(dir, "b-search"),
        restart: "on-failure",
      },
    ],
  });
  const { ServicesListSchema } = await import("../../lib/wire/services.ts");
  assert.ok(ServicesListSchema.safeParse(doc).success);
  await assert.rejects(Deno.stat(join(dir, "b-search", "data", "started")));
});

Deno.test("services list prints a table, one service a row", async () => {
  const dir = await Deno.realPath(await plugins());
  const r = await cli(["services", "list", "--plugins-dir", dir]);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trimEnd().split("\n");
  assert.equal(lines.length, 3);
  assert.match(lines[0], /^PLUGIN\s+SERVICE\s+RESTART\s+CWD\s+COMMAND$/);
  assert.match(lines[1], /^b-search\s+index\s+always\s+\S+\/b-search\/data\s+touch started/);
  assert.match(lines[2], /^b-search\s+watch\s+on-failure\s+\S+\/b-search\s+\.\/watch\.sh$/);
});

Deno.test("services list --json with no services prints an empty list", async () => {
  const r = await cli(["services", "list", "--json", "--plugins-dir", await makeTree({})]);
  assert.equal(r.code, 0);
  assert.deepEqual(JSON.parse(r.stdout), { services: [] });
});
