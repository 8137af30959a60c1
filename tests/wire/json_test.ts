import assert from "node:assert/strict";
import { HostFactsSchema } from "../../lib/wire/host_facts.ts";
import { probeHost } from "../../lib/hosts/probe.ts";
import { ServicesStatusSchema } from "../../lib/wire/services.ts";
import { mayHoldMoreContainers } from "../../lib/wire/json.ts";

// The facts of this machine, as `tyhooks probe` prints them.
const FACTS = await probeHost({ workdir: "/" });

Deno.test("HostFactsSchema drops unknown keys and names every problem of an answer", () => {
  assert.deepEqual(HostFactsSchema.parse({ ...FACTS, newer_fact: 1 }), FACTS);
  const result = HostFactsSchema.safeParse({ ...FACTS, cpus: 0, load_avg: [1, 2], os: undefined });
  assert.ok(!result.success);
  assert.deepEqual(result.error.issues, [
    { path: ["os"], message: "missing" },
    { path: ["cpus"], message: "expected an integer of at least 1, got 0" },
    { path: ["load_avg"], message: "expected an array of 3, got an array of 2" },
  ]);
});

Deno.test("ServicesStatusSchema refuses a key the document does not have, and reads null where allowed", () => {
  const status = {
    plugin: "p",
    name: "s",
    state: "running",
    pid: null,
    restarts: 0,
    last_exit: { code: null, signal: "SIGTERM", error: null, uptime_ms: 5 },
  };
  assert.deepEqual(ServicesStatusSchema.parse({ services: [status] }), { services: [status] });
  const drifted = ServicesStatusSchema.safeParse({
    services: [{ ...status, state: "up", cpu: 1 }],
  });
  assert.ok(!drifted.success);
  assert.deepEqual(drifted.error.issues, [
    {
      path: ["services", 0, "state"],
      message: 'expected "starting", "running", "backoff", "given_up" or "stopped", got "up"',
    },
    { path: ["services", 0], message: 'unknown key "cpu"' },
  ]);
  assert.throws(() => ServicesStatusSchema.parse([]), {
    name: "SchemaError",
    message: "expected an object, got an array of 0",
  });
});

Deno.test("mayHoldMoreContainers counts { and [, those in strings too", () => {
  const bytes = (text: string) => new TextEncoder().encode(text);
  assert.equal(mayHoldMoreContainers(bytes("[{},{}]"), 3), false);
  assert.equal(mayHoldMoreContainers(bytes("[{},{},{}]"), 3), true);
  assert.equal(mayHoldMoreContainers(bytes('{"a":"[[[["}'), 4), true);
  // Too short to hold more, whatever it holds.
  assert.equal(mayHoldMoreContainers(bytes("[[[["), 2), false);
});
