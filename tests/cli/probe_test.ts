import assert from "node:assert/strict";
import { PROBE_FIELDS as FIELDS } from "../hosts/_probe_fields.ts";
import { HostFactsSchema } from "../../lib/wire/host_facts.ts";
import { cli, tempDir } from "../_cli.ts";

Deno.test("tyhooks probe prints one JSON object with every field, non-zero memory and cpus", async () => {
  const r = await cli(["probe", "--workdir", "/"]);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.ok(r.stdout.endsWith("}\n") && r.stdout.trim().split("\n").length === 1);
  const facts = HostFactsSchema.parse(JSON.parse(r.stdout));
  assert.deepEqual(Object.keys(JSON.parse(r.stdout)), FIELDS);
  assert.ok(facts.cpus > 0 && facts.mem_total_bytes > 0 && facts.mem_available_bytes > 0);
  assert.ok(facts.disk_free_bytes > 0);
});

Deno.test("tyhooks probe without --workdir measures free disk in $HOME", async () => {
  const r = await cli(["probe"], { env: { HOME: await tempDir() } });
  assert.equal(r.code, 0, r.stderr);
  assert.equal(r.stderr, "");
  assert.ok(JSON.parse(r.stdout).disk_free_bytes > 0);
});

Deno.test("tyhooks probe warns and reports 0 free disk for a missing --workdir", async () => {
  const r = await cli(["probe", "--workdir", "/nonexistent/dir"]);
  assert.equal(r.code, 0);
  assert.equal(JSON.parse(r.stdout).disk_free_bytes, 0);
  assert.match(
    r.stderr,
    /^tyhooks: warn: Cannot measure free disk of "\/nonexistent\/dir": df exited 1/,
  );
});

Deno.test("tyhooks probe refuses a positional argument", async () => {
  const r = await cli(["probe", "/tmp"]);
  assert.equal(r.code, 64);
  assert.match(r.stderr, /Unexpected argument "\/tmp" for "probe"/);
});
