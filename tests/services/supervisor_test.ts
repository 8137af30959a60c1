import assert from "node:assert/strict";
import { parseEnvEntry, serviceEnv } from "../../lib/services/supervisor.ts";
import type { PluginService } from "../../lib/plugins/types.ts";
import { valueIn } from "../_cli.ts";

const service = (env: string[]): PluginService => ({
  name: "s",
  command: "true",
  cwd: "/",
  env,
  restart: "on-failure",
});

Deno.test("serviceEnv() layers passed-through TY_* under --env pairs under the service's own env", async () => {
  // TY_DB_PATH is read from the environment: set in a child's, never in this shared process's.
  const env = await valueIn(
    { serviceEnv: "lib/services/supervisor.ts" },
    `serviceEnv(${JSON.stringify(service(["FOO=bar", "SHARED=own"]))}, ` +
      `{ SHARED: "injected", INJECTED: "yes" })`,
    { env: { TY_DB_PATH: "/parent/ty.db" } },
  ) as Record<string, string>;
  assert.equal(env.TY_DB_PATH, "/parent/ty.db");
  assert.equal(env.FOO, "bar");
  assert.equal(env.SHARED, "own");
  assert.equal(env.INJECTED, "yes");
  assert.equal(serviceEnv(service([]), { TY_DB_PATH: "/injected" }).TY_DB_PATH, "/injected");
});

Deno.test("serviceEnv() keeps = in values, skips malformed entries and removes NUL bytes", () => {
  const env = serviceEnv(service(["URL=a=b", "NOEQUALS", "=x", "BAD\0=1", "NUL=a\0b"]));
  assert.equal(env.URL, "a=b");
  assert.equal(env.NUL, "ab");
  assert.ok(!("NOEQUALS" in env) && !("" in env));
  assert.ok(Object.keys(env).every((k) => !k.includes("\0")));
});

Deno.test("parseEnvEntry() accepts KEY=VALUE with a shell-safe key only", () => {
  assert.deepEqual(parseEnvEntry("A_1="), ["A_1", ""]);
  assert.equal(parseEnvEntry("A-B=1"), null);
  assert.equal(parseEnvEntry("9A=1"), null);
  assert.equal(parseEnvEntry("A"), null);
});
