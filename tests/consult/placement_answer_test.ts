import assert from "node:assert/strict";
import { readPlacementAnswer } from "../../lib/consult/placement.ts";
import { parsePlacementAnswer } from "../../lib/wire/placement.ts";
import { readPreAnswer } from "../../lib/consult/tool_hooks.ts";
import { parsePreAnswer } from "../../lib/wire/tool.ts";

const PLACEMENT_ANSWERS = [
  '{"target":" gpu-1 ","workdir":"~/src","reason":"free"}',
  '{"target":" gpu-1 ","workdir":" ~/src ","reason":"  most free memory:\\n 12 GiB "}',
  '{"target":"","reason":"stay local"}',
  '{"target":null,"workdir":null}',
  "{}",
  '{"target":"a","extra":{"x":1}}',
  '{"target":7}',
  '{"workdir":["x"]}',
  "[]",
  '"gpu-1"',
  "null",
  "{oops",
  // As Go's encoding/json reads ty's struct: keys in any case, the last match wins, null keeps.
  '{"Target":"gpu-1","WORKDIR":"~/w","Reason":"why"}',
  '{"target":"a","TARGET":"b"}',
  '{"target":"a","Target":null}',
  '{"\u017ftarget":"x","reaſon":"long s"}',
  '{"TARGET":7}',
];

Deno.test("readPlacementAnswer() reads answers as Go's encoding/json does", async () => {
  const read = async (stdout: string) => {
    const got = await readPlacementAnswer(stdout);
    return got.ok ? got.answer : got.error;
  };
  const local = { target: "", workdir: "", reason: "" };
  assert.deepEqual(await read("null"), local);
  assert.deepEqual(await read('{"Target":" gpu-1 ","WORKDIR":"~/w"}'), {
    ...local,
    target: "gpu-1",
    workdir: "~/w",
  });
  assert.deepEqual(await read('{"target":"a","TARGET":"b"}'), { ...local, target: "b" });
  assert.deepEqual(await read('{"target":"a","Target":null}'), { ...local, target: "a" });
  assert.deepEqual(await read('{"reaſon":"long s"}'), { ...local, reason: "long s" });
  // As ty: target and workdir trimmed, the reason kept as the handler wrote it; by the schema too.
  const padded = '{"target":" gpu-1 ","workdir":" ~/w ","reason":"  free \\n"}';
  const kept = { target: "gpu-1", workdir: "~/w", reason: "  free \n" };
  assert.deepEqual(await read(padded), kept);
  assert.deepEqual(parsePlacementAnswer(padded), { ok: true, answer: kept });
  assert.match(String(await read('{"TARGET":7}')), /^wrong type: "target"/);
});

Deno.test("readPlacementAnswer() reads every answer exactly as the zod schema does", async () => {
  for (const stdout of PLACEMENT_ANSWERS) {
    assert.deepEqual(await readPlacementAnswer(stdout), parsePlacementAnswer(stdout), stdout);
  }
});

const PRE_ANSWERS = [
  '{"action":"allow"}',
  '{"action":" Block ","reason":" rm -rf "}',
  '{"action":"block","reason":null}',
  '{"action":"maybe"}',
  '{"reason":"no action"}',
  '{"action":"block","reason":5}',
  '{"action":1}',
  "[]",
  "{oops",
];

Deno.test("readPreAnswer() reads every answer exactly as the zod schema does", async () => {
  for (const stdout of PRE_ANSWERS) {
    assert.deepEqual(await readPreAnswer(stdout), parsePreAnswer(stdout), stdout);
  }
});
