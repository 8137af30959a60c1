import assert from "node:assert/strict";
import { readPlacementAnswer } from "../../lib/resolve/placement_answer.ts";
import { parsePlacementAnswer } from "../../lib/resolve/placement_schema.ts";
import { readPreAnswer } from "../../lib/toolcalls/pre_answer.ts";
import { parsePreAnswer } from "../../lib/toolcalls/tool_schema.ts";

const PLACEMENT_ANSWERS = [
  '{"target":" gpu-1 ","workdir":"~/src","reason":"free"}',
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
];

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
