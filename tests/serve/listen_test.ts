import assert from "node:assert/strict";
import { join } from "node:path";
import { formatListen, isLoopback, parseListen } from "../../lib/serve/listen.ts";
import { UsageError } from "../../lib/errors.ts";

Deno.test("parseListen() reads unix:PATH, HOST:PORT and [IPV6]:PORT", () => {
  assert.deepEqual(parseListen("unix:/run/t.sock"), { transport: "unix", path: "/run/t.sock" });
  assert.deepEqual(parseListen("127.0.0.1:7700"), {
    transport: "tcp",
    hostname: "127.0.0.1",
    port: 7700,
  });
  assert.deepEqual(parseListen("localhost:0"), {
    transport: "tcp",
    hostname: "localhost",
    port: 0,
  });
  assert.deepEqual(parseListen("[::1]:80"), { transport: "tcp", hostname: "::1", port: 80 });
});

Deno.test("parseListen() makes a relative socket path absolute", () => {
  assert.deepEqual(parseListen("unix:t.sock"), {
    transport: "unix",
    path: join(Deno.cwd(), "t.sock"),
  });
});

Deno.test("parseListen() defaults to tyhooks.sock in the runtime dir", () => {
  const before = Deno.env.get("XDG_RUNTIME_DIR");
  Deno.env.set("XDG_RUNTIME_DIR", "/run/user/1234");
  try {
    assert.deepEqual(parseListen(undefined), {
      transport: "unix",
      path: "/run/user/1234/tyhooks.sock",
    });
  } finally {
    if (before === undefined) Deno.env.delete("XDG_RUNTIME_DIR");
    else Deno.env.set("XDG_RUNTIME_DIR", before);
  }
});

Deno.test("parseListen() refuses a bad value, naming the flag and the value", () => {
  for (const bad of ["unix:", "7700", "host:", "host:99999", "::1:80", "a b:1"]) {
    assert.throws(() => parseListen(bad), (error: Error) => {
      assert.ok(error instanceof UsageError);
      assert.equal(error.message, `Invalid value "${bad}" for flag "--listen"`);
      return true;
    });
  }
});

Deno.test("isLoopback() accepts only addresses no other host can reach", () => {
  for (const host of ["127.0.0.1", "127.1.2.3", "localhost", "::1", "::ffff:127.0.0.1"]) {
    assert.ok(isLoopback(host), host);
  }
  for (const host of ["0.0.0.0", "::", "10.0.0.1", "192.168.1.5", "example.com", "128.0.0.1"]) {
    assert.ok(!isLoopback(host), host);
  }
});

Deno.test("formatListen() spells addresses as --listen does", () => {
  assert.equal(formatListen({ transport: "unix", path: "/t.sock" }), "unix:/t.sock");
  assert.equal(formatListen({ transport: "tcp", hostname: "::1", port: 1 }), "[::1]:1");
  assert.equal(formatListen({ transport: "tcp", hostname: "127.0.0.1", port: 2 }), "127.0.0.1:2");
});
