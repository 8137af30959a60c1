import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, ROOT } from "../_cli.ts";

Deno.test("plugins schema prints a JSON Schema with the manifest's properties", async () => {
  const result = await cli(["plugins", "schema"]);
  assert.equal(result.code, 0);
  assert.equal(result.stderr, "");
  const schema = JSON.parse(result.stdout);
  assert.equal(schema.$schema, "http://json-schema.org/draft-07/schema#");
  // Nothing of the later drafts that editors' YAML support does not read.
  assert.ok(!/"\$defs"|"prefixItems"|"unevaluated|"dependentSchemas"/.test(result.stdout));
  assert.equal(schema.type, "object");
  const keys = ["name", "version", "description", "hooks", "actions", "services", "tyhooks"];
  assert.deepEqual(Object.keys(schema.properties), keys);
  assert.deepEqual(schema.properties.services.items.properties.restart.enum, [
    "always",
    "on-failure",
    "never",
  ]);
  assert.deepEqual(schema.properties.actions.items.required, ["id", "command"]);
});

Deno.test("every example manifest carries the schema modeline, and the schema it names is current", async () => {
  const examples = join(ROOT, "plugins-example");
  for (const entry of Deno.readDirSync(examples)) {
    if (!entry.isDirectory) continue;
    const manifest = await Deno.readTextFile(join(examples, entry.name, "plugin.yaml"));
    assert.ok(
      manifest.startsWith("# yaml-language-server: $schema=../plugin.schema.json\n"),
      entry.name,
    );
  }
  const result = await cli(["plugins", "schema"]);
  assert.equal(await Deno.readTextFile(join(examples, "plugin.schema.json")), result.stdout);
});
