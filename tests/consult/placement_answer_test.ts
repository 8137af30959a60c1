import assert from "node:assert/strict";
import { parseAnswer } from "../../lib/wire/json.ts";
import {
  HostsAnswerSchema,
  PlacementAnswerSchema,
  PlacementRequestSchema,
} from "../../lib/consult/placement.ts";

function placement(stdout: string) {
  const read = parseAnswer(PlacementAnswerSchema, stdout);
  return read.ok ? read.answer : read.error;
}

const LOCAL = { target: "", workdir: "", reason: "" };

Deno.test("a placement answer is read as Go's encoding/json reads ty's struct", () => {
  assert.deepEqual(placement("null"), LOCAL);
  assert.deepEqual(placement("{}"), LOCAL);
  assert.deepEqual(placement('{"target":null,"workdir":null}'), LOCAL);
  assert.deepEqual(placement('{"target":"a","extra":{"x":1}}'), { ...LOCAL, target: "a" });
  // Keys in any case (ſ is an s), the last match wins, and a null leaves the earlier value.
  assert.deepEqual(placement('{"Target":" gpu-1 ","WORKDIR":"~/w","Reason":"why"}'), {
    target: "gpu-1",
    workdir: "~/w",
    reason: "why",
  });
  assert.deepEqual(placement('{"target":"a","TARGET":"b"}'), { ...LOCAL, target: "b" });
  assert.deepEqual(placement('{"target":"a","Target":null}'), { ...LOCAL, target: "a" });
  assert.deepEqual(placement('{"\u017ftarget":"x","rea\u017fon":"long s"}'), {
    ...LOCAL,
    reason: "long s",
  });
});

Deno.test("a placement answer keeps its reason as written and trims target and workdir", () => {
  assert.deepEqual(placement('{"target":" gpu-1 ","workdir":" ~/w ","reason":"  free \\n"}'), {
    target: "gpu-1",
    workdir: "~/w",
    reason: "  free \n",
  });
});

Deno.test("a placement answer of the wrong shape is refused, naming the field and what it got", () => {
  assert.equal(placement('{"TARGET":7}'), 'wrong answer: "target": expected a string, got 7');
  assert.equal(
    placement('{"workdir":["x"]}'),
    'wrong answer: "workdir": expected a string, got an array of 1',
  );
  assert.equal(placement("[]"), "wrong answer: expected an object, got an array of 0");
  assert.equal(placement('"gpu-1"'), 'wrong answer: expected an object, got "gpu-1"');
  assert.match(String(placement("{oops")), /^malformed JSON: /);
});

Deno.test("a hosts answer is read as Go's encoding/json reads it, each field trimmed", () => {
  const read = (stdout: string) => {
    const got = parseAnswer(HostsAnswerSchema, stdout);
    return got.ok ? got.answer : got.error;
  };
  const empty = { name: "", target: "", workdir: "", detail: "" };
  assert.deepEqual(read("null"), { hosts: [] });
  assert.deepEqual(read('{"HOSTS":null}'), { hosts: [] });
  assert.deepEqual(read('{"hosts":[{"Name":" a ","extra":1},null,{"target":"b","detail":"x"}]}'), {
    hosts: [{ ...empty, name: "a" }, empty, { ...empty, target: "b", detail: "x" }],
  });
  assert.equal(read('{"hosts":{}}'), 'wrong answer: "hosts": expected an array, got an object');
  assert.equal(
    read('{"hosts":[{"name":"a"},{"name":1}]}'),
    'wrong answer: "hosts.1.name": expected a string, got 1',
  );
});

Deno.test("PlacementRequestSchema reads the request a handler gets, and fills in what is left out", () => {
  assert.deepEqual(PlacementRequestSchema.parse({ event: "task.placement", task: { id: 4 } }), {
    event: "task.placement",
    task: { id: 4, title: "", project: "", repo_path: "", executor: "" },
  });
  const wrong = PlacementRequestSchema.safeParse({ event: "task.hosts", task: { id: -1 } });
  assert.ok(!wrong.success);
  assert.deepEqual(wrong.error.issues, [
    { path: ["event"], message: 'expected "task.placement", got "task.hosts"' },
    { path: ["task", "id"], message: "expected an integer of at least 0, got -1" },
  ]);
});
