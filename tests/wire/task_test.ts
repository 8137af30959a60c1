import assert from "node:assert/strict";
import { InputError } from "../../lib/errors.ts";
import {
  EMPTY_TASK,
  parseTask,
  PlacementBodySchema,
  StatusChangeBodySchema,
} from "../../lib/wire/task.ts";

Deno.test("parseTask() fills in what is missing or null and drops unknown fields", () => {
  const task = parseTask(
    '{"id":7,"title":"Ship","body":null,"port":null,"metadata":{"a":[1]},"nope":1}',
    "--task-json",
  );
  assert.deepEqual(task, { ...EMPTY_TASK, id: 7, title: "Ship", metadata: { a: [1] } });
});

Deno.test("parseTask() names the bad field and what it got, and the input it came from", () => {
  const invalid = (text: string) => {
    try {
      parseTask(text, "--task-json");
    } catch (error) {
      assert.ok(error instanceof InputError && error.input === "--task-json");
      return error.message.replace("Invalid task in --task-json: ", "");
    }
    assert.fail(`${text} passed`);
  };
  assert.equal(invalid('{"id":"seven"}'), '"id": expected an integer, got "seven"');
  assert.equal(invalid('{"id":1.5}'), '"id": expected an integer, got 1.5');
  // JSON.parse rounds these: the refusal must not name a number that was never sent.
  for (const id of ["9007199254740993", "-12345678901234567890", "1e400"]) {
    assert.equal(
      invalid(`{"id":${id}}`),
      '"id": expected an integer, got one too large to hold exactly (past 2^53)',
    );
  }
  assert.equal(invalid('{"metadata":[1]}'), '"metadata": expected an object, got an array of 1');
  assert.equal(invalid('{"tags":["a"]}'), '"tags": expected a string, got an array of 1');
  assert.equal(invalid("[]"), "expected an object, got an array of 0");
  assert.match(invalid("{oops"), /^malformed JSON: /);
});

Deno.test("the daemon's bodies fill in their defaults, leave a missing task out, and need a status", () => {
  assert.deepEqual(PlacementBodySchema.parse({}), { remote_required: false });
  assert.deepEqual(PlacementBodySchema.parse({ task: { id: 2 }, remote_required: true }), {
    task: { ...EMPTY_TASK, id: 2 },
    remote_required: true,
  });
  const result = StatusChangeBodySchema.safeParse({ task: { id: "x" }, message: 3 });
  assert.ok(!result.success);
  // Every problem is found, not only the first.
  assert.deepEqual(result.error.issues.map((issue) => issue.path.join(".")), [
    "task.id",
    "status",
    "message",
  ]);
});
