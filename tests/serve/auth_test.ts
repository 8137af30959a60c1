import assert from "node:assert/strict";
import { bearerCheck, checkExposure, readTokenFile } from "../../lib/serve/auth.ts";
import { UsageError } from "../../lib/errors.ts";

Deno.test("readTokenFile() strips trailing whitespace and refuses an empty file", async () => {
  const file = await Deno.makeTempFile();
  await Deno.writeTextFile(file, "  s3cret \n\n");
  assert.equal(await readTokenFile(file), "  s3cret");
  await Deno.writeTextFile(file, " \n");
  await assert.rejects(readTokenFile(file), UsageError);
  await assert.rejects(readTokenFile(`${file}.missing`), /Cannot read --token-file/);
});

Deno.test("checkExposure() refuses a non-loopback address without a token", () => {
  assert.throws(
    () => checkExposure({ transport: "tcp", hostname: "0.0.0.0", port: 7700 }, undefined),
    (error: Error) =>
      error instanceof UsageError && /"0\.0\.0\.0:7700".*--token-file/.test(error.message),
  );
  checkExposure({ transport: "tcp", hostname: "0.0.0.0", port: 7700 }, "t");
  checkExposure({ transport: "tcp", hostname: "127.0.0.1", port: 7700 }, undefined);
  checkExposure({ transport: "unix", path: "/t.sock" }, undefined);
});

Deno.test("bearerCheck() accepts exactly the token, and nothing else", async () => {
  const ok = bearerCheck("s3cret");
  const request = (authorization?: string) =>
    new Request("http://x/", { headers: authorization ? { authorization } : {} });
  assert.ok(await ok(request("Bearer s3cret")));
  assert.ok(await ok(request("bearer s3cret")));
  for (
    const bad of [undefined, "Bearer", "Bearer s3cre", "Bearer s3cret2", "Basic s3cret", "s3cret"]
  ) {
    assert.ok(!(await ok(request(bad))), String(bad));
  }
});
