import assert from "node:assert/strict";
import { cli } from "../_cli.ts";

Deno.test("plugins schema prints a JSON Schema with the manifest's properties", async () => {
  const result = await cli(["plugins", "schema"]);
  assert.equal(result.code, 0);
  assert.equal(result.stderr, "");
  const schema = JSON.parse(result.stdout);
  assert.equal(schema.$schema, "https://json-schema.org/draft/2020-12/schema");
  assert.equal(schema.type, "object");
  assert.deepEqual(Object.keys(schema.properties), [
    "name",
    "version",
    "description",
    "hooks",
    "actions",
    "services",
    "tyhooks",
  ]);
  assert.deepEqual(schema.properties.services.items.properties.restart.enum, [
    "always",
    "on-failure",
    "never",
  ]);
  assert.deepEqual(schema.properties.actions.items.required, ["id", "command"]);
});
