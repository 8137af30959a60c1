/**
 * Reading the decision log back (`tyhooks log`), trusting nothing in it: a line is shown only
 * once it reads as a record. What is in the log, and how a decision is appended to it, is in
 * lib/log.ts.
 *
 * @module
 */

import type { DecisionRecord } from "./log.ts";
import {
  type Infer,
  nullable,
  number,
  object,
  orDefault,
  parseJson,
  type Same,
  string,
} from "./wire/json.ts";

// Reading: the log is the user's own file, but whatever is in it is shown only once it reads
// as a record (a line cut by a crash, or edited by hand, is skipped and counted).

const text = orDefault(string(), "");
const decisionRecord = object({
  ts: text,
  event: text,
  agent: text,
  tool: text,
  args: text,
  task_id: orDefault(nullable(number()), null),
  decision: text,
  reason: text,
  plugin: text,
  ms: orDefault(number(), 0),
  pid: orDefault(number(), 0),
});
true satisfies Same<Infer<typeof decisionRecord>, DecisionRecord>;

/** One line of the log read back: the record, or null when the line is not one. */
export function readDecisionLine(line: string): DecisionRecord | null {
  const parsed = parseJson(line);
  if (!parsed.ok) return null;
  const read = decisionRecord.safeParse(parsed.value);
  return read.success ? read.data : null;
}
