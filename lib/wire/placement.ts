/**
 * The `task.placement` wire formats: the request a handler reads, its answer. Loaded lazily: zod
 * is only paid for when an answer is odd (`lib/consult/placement.ts` reads well-formed ones).
 *
 * @module
 */

import { z } from "zod";
import type { Same } from "./schema.ts";
import { goFields, isRecord, parseAnswer } from "./json.ts";
import { TASK_PLACEMENT } from "../events.ts";

/**
 * What a placement question is about, and what a handler reads as the request's `task`: a whole
 * `Task` will do (only these fields are sent).
 */
export interface PlacementInfo {
  /** The task's id. */
  id: number;
  /** The task's title. */
  title: string;
  /** The task's project. */
  project: string;
  /** The repository the task works on. */
  repo_path: string;
  /** The agent that runs it, e.g. `claude`. */
  executor: string;
  /** The task must run on a remote host (sent to handlers only when true). */
  remote_required?: boolean;
}

/** Zod schema of the request a placement handler reads on stdin. */
export const PlacementRequestSchema = z.object({
  event: z.literal(TASK_PLACEMENT),
  task: z.object({
    id: z.number().int().nonnegative().default(0),
    title: z.string().default(""),
    project: z.string().default(""),
    repo_path: z.string().default(""),
    executor: z.string().default(""),
    /** Sent only when true: the host must not run the task locally. */
    remote_required: z.boolean().optional(),
  }),
});

/** The request a placement handler reads on stdin, as sent (`remote_required` only when true). */
export interface PlacementRequest {
  /** Always `task.placement`. */
  event: "task.placement";
  /** The task to place: only these fields, so that a handler never learns its body. */
  task: PlacementInfo;
}

const ANSWER_FIELDS = ["target", "workdir", "reason"] as const;

// A JSON null counts as empty, as in ty: Go leaves a string untouched when it decodes null.
const text = z.string().nullish().transform((value) => value ?? "");
const trimmed = text.transform((value) => value.trim());

/**
 * Zod schema of a placement handler's answer: strings only (missing or null = empty; target and
 * workdir trimmed, reason kept as written, as ty does), keys in any case, extra keys ignored; a
 * `null` answer is empty. An empty `target` means "run locally".
 */
export const PlacementAnswerSchema = z.preprocess(
  // As Go's encoding/json reads ty's struct: keys in any case, null as empty.
  (value) => value === null ? {} : isRecord(value) ? goFields(value, ANSWER_FIELDS) : value,
  z.object({ target: trimmed, workdir: trimmed, reason: text }),
);

// The schemas validate, the interfaces document: neither may gain a field the other lacks.
true satisfies Same<z.output<typeof PlacementRequestSchema>, PlacementRequest>;
true satisfies Same<z.output<typeof PlacementAnswerSchema>, PlacementAnswer>;

/**
 * A placement handler's answer, validated: every field a string, `""` when missing or null;
 * target and workdir trimmed, reason as written.
 */
export interface PlacementAnswer {
  /** The host to run on; `""` = run locally. */
  target: string;
  /** A path on the target host (a leading `~` is left alone); may be empty. */
  workdir: string;
  /** Why, in words a person can read, as written; may be empty. */
  reason: string;
}

/** A placement handler's stdout (known not to be blank) as an answer, or why it is not one. */
export function parsePlacementAnswer(
  stdout: string,
): { ok: true; answer: PlacementAnswer } | { ok: false; error: string } {
  return parseAnswer(PlacementAnswerSchema, stdout);
}
