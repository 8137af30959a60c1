import assert from "node:assert/strict";
import { bearerCheck, checkExposure, readTokenFile } from "../../lib/serve/auth.ts";
import { UsageError } from "../../lib/errors.ts";
import { join } from "node:path";

Deno.test("readTokenFile() trims the token at both ends and refuses an empty file", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "token");
    await Deno.writeTextFile(file, "  s3cret \n\n", { mode: 0o600 });
    assert.equal(await readTokenFile(file), "s3cret");
    await Deno.writeTextFile(file, " \n");
    await assert.rejects(readTokenFile(file), UsageError);
    await assert.rejects(readTokenFile(`${file}.missing`), /Cannot read --token-file/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTokenFile() refuses a token file group or others may read, naming its mode", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "token");
    await Deno.writeTextFile(file, "s3cret\n");
    for (const mode of [0o644, 0o640, 0o604, 0o620]) {
      await Deno.chmod(file, mode);
      await assert.rejects(
        readTokenFile(file),
        (error: Error) =>
          error instanceof UsageError &&
          error.message.includes(`mode 0${mode.toString(8)}`) &&
          error.hint === `hint: chmod 600 ${file}`,
      );
    }
    await Deno.chmod(file, 0o400);
    assert.equal(await readTokenFile(file), "s3cret");
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTokenFile() refuses a token file owned by another user (as root: chown nobody)", {
  ignore: Deno.uid() !== 0,
}, async () => {
  const dir = await Deno.makeTempDir();
  try {
    const file = join(dir, "token");
    await Deno.writeTextFile(file, "s3cret\n", { mode: 0o600 });
    await Deno.chown(file, 65534, null);
    await assert.rejects(readTokenFile(file), /owned by user 65534, not by the current user 0/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("readTokenFile() refuses a FIFO and a file over 4 KiB instead of hanging or eating memory", async () => {
  const dir = await Deno.makeTempDir();
  try {
    const fifo = join(dir, "fifo");
    const mkfifo = await new Deno.Command("mkfifo", { args: ["-m", "600", fifo] }).output();
    assert.equal(mkfifo.code, 0);
    await assert.rejects(readTokenFile(fifo), /Invalid --token-file ".*fifo": not a regular file/);
    const big = join(dir, "big");
    await Deno.writeTextFile(big, "x".repeat(4097), { mode: 0o600 });
    await assert.rejects(readTokenFile(big), /Cannot read --token-file ".*big": larger than 4096/);
    await Deno.writeTextFile(big, "x".repeat(4096));
    assert.equal((await readTokenFile(big)).length, 4096);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
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
