/**
 * A linear-time matcher for the common subset of RE2 that `tools` settings use (listed in
 * lib/README.md, "Startup and the index cache"), so a call need not load re2js (260 kB to parse,
 * then table setup). What lies outside it or is not valid RE2 is not taken but left to RE2, which
 * also words the error: this file must only never accept what RE2 refuses, and answer as RE2 does.
 * Matching is Thompson's simulation of the NFA a code point at a time, no backtracking: at most the
 * name's length times the states, which are capped.
 *
 * @module
 */

/** A compiled `tools` expression. */
export interface ToolMatcher {
  /** Is the expression found anywhere in `tool` (unanchored, as RE2's search)? */
  test(tool: string): boolean;
}

/** The matcher for `source`, or undefined when it is outside the subset or not valid RE2. */
export function compileToolMatcher(source: string): ToolMatcher | undefined {
  const chars = Array.from(source); // code points
  // A lone surrogate is not UTF-8, which RE2 reads patterns as.
  if (chars.some((c) => codePoint(c) >= 0xd800 && codePoint(c) <= 0xdfff)) return undefined;
  try {
    const parser = { chars, at: 0 };
    const tree = parseAlternation(parser, 0);
    if (parser.at < chars.length) return undefined; // an unmatched `)`
    const states: State[] = [{ op: "match" }];
    const start = emit(tree, { states, next: 0 });
    return { test: (tool) => search(states, { start, text: Array.from(tool, codePoint) }) };
  } catch (error) {
    if (error instanceof NotTaken) return undefined;
    throw error;
  }
}

class NotTaken extends Error {}

type Node =
  | { op: "set"; ranges: number[]; negated: boolean } // one character in (or out of) the ranges
  | { op: "begin" | "end" }
  | { op: "cat" | "alt"; subs: Node[] }
  | { op: "repeat"; sub: Node; min: number; max: number }; // max -1: no upper bound

type Parser = { chars: string[]; at: number };

const MAX_RUNE = 0x10ffff;
// RE2's limit on a count in braces, and on the copies nested counted repeats make in all.
const MAX_REPEAT = 1000;
// Ours, far below RE2's own: past them RE2 decides (and may refuse).
const MAX_DEPTH = 100;
const MAX_STATES = 10_000;

const DIGIT = [0x30, 0x39];
const WORD = [0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a];
const SPACE = [0x09, 0x0a, 0x0c, 0x0d, 0x20, 0x20]; // RE2's \s leaves out \v
const PERL_CLASSES: Record<string, number[]> = {
  d: DIGIT,
  w: WORD,
  s: SPACE,
  D: complement(DIGIT),
  W: complement(WORD),
  S: complement(SPACE),
};
const CONTROL_ESCAPES: Record<string, number> = { a: 7, f: 12, n: 10, r: 13, t: 9, v: 11 };

function notTaken(): never {
  throw new NotTaken();
}

function codePoint(c: string): number {
  return c.codePointAt(0)!;
}

function parseAlternation(p: Parser, depth: number): Node {
  const subs = [parseConcatenation(p, depth)];
  while (p.chars[p.at] === "|") {
    p.at++;
    subs.push(parseConcatenation(p, depth));
  }
  return subs.length === 1 ? subs[0] : { op: "alt", subs };
}

function parseConcatenation(p: Parser, depth: number): Node {
  const subs: Node[] = [];
  for (let c = p.chars[p.at]; c !== undefined && c !== "|" && c !== ")"; c = p.chars[p.at]) {
    subs.push(parseRepeat(p, parseAtom(p, depth)));
  }
  return { op: "cat", subs };
}

function parseAtom(p: Parser, depth: number): Node {
  const c = p.chars[p.at++];
  switch (c) {
    case "(": {
      if (depth >= MAX_DEPTH) notTaken();
      if (p.chars[p.at] === "?") {
        if (p.chars[p.at + 1] !== ":") notTaken(); // flags, named groups, lookaround
        p.at += 2;
      }
      const sub = parseAlternation(p, depth + 1);
      if (p.chars[p.at++] !== ")") notTaken();
      return sub;
    }
    case "[":
      return parseClass(p);
    case ".":
      return { op: "set", ranges: [0x0a, 0x0a], negated: true }; // all but newline
    case "^":
      return { op: "begin" };
    case "$":
      return { op: "end" };
    case "\\": {
      const e = p.chars[p.at];
      if (e === "A" || e === "z") {
        p.at++;
        return { op: e === "A" ? "begin" : "end" };
      }
      if (e in PERL_CLASSES) {
        p.at++;
        return { op: "set", ranges: PERL_CLASSES[e], negated: false };
      }
      const char = parseEscape(p);
      return { op: "set", ranges: [char, char], negated: false };
    }
  }
  // A repeat with nothing to repeat, or `{` as a literal: rare either way.
  if (["*", "+", "?", "{"].includes(c)) notTaken();
  return { op: "set", ranges: [codePoint(c), codePoint(c)], negated: false };
}

// The quantifier after an atom, if any. Laziness changes which match is found, never whether.
function parseRepeat(p: Parser, sub: Node): Node {
  const c = p.chars[p.at];
  let min = 0, max = -1;
  if (c === "+") min = 1;
  else if (c === "?") max = 1;
  else if (c === "{") [min, max] = parseCount(p);
  else if (c !== "*") return sub;
  p.at++;
  if (p.chars[p.at] === "?") p.at++;
  // RE2 refuses a repeat of a repeat (`a**`); a `{` literal there is left to it too.
  if (["*", "+", "?", "{"].includes(p.chars[p.at])) notTaken();
  const node: Node = { op: "repeat", sub, min, max };
  if ((min >= 2 || max >= 2) && !withinRepeatLimit(node, MAX_REPEAT)) notTaken();
  return node;
}

// `{n}`, `{n,}` or `{n,m}` (RE2 reads `{` as a literal unless its digits have no leading
// zero), leaving `at` on its `}`.
function parseCount(p: Parser): [number, number] {
  const match = /^\{(0|[1-9]\d*)(,(0|[1-9]\d*)?)?\}/.exec(p.chars.slice(p.at, p.at + 12).join(""));
  if (match === null) notTaken();
  const min = Number(match[1]);
  const max = match[2] === undefined ? min : match[3] === undefined ? -1 : Number(match[3]);
  if (min > MAX_REPEAT || max > MAX_REPEAT || (max >= 0 && min > max)) notTaken();
  p.at += match[0].length - 1;
  return [min, max];
}

// RE2's rule for repeats inside repeats: the copies they make in all stay within the limit,
// counting an unbounded repeat by its minimum (so `*`, `+` and `?` count for nothing).
function withinRepeatLimit(node: Node, limit: number): boolean {
  if (node.op === "repeat") {
    if (node.max === 0) return true;
    const copies = node.max < 0 ? node.min : node.max;
    if (copies > limit) return false;
    if (copies > 0) limit = Math.trunc(limit / copies);
  }
  const subs = node.op === "repeat" ? [node.sub] : "subs" in node ? node.subs : [];
  return subs.every((sub) => withinRepeatLimit(sub, limit));
}

// After `[`: RE2's Perl-mode class, where `]` first is a literal and `-` is one wherever it
// cannot make a range. A negated class matches newline too.
function parseClass(p: Parser): Node {
  const negated = p.chars[p.at] === "^";
  if (negated) p.at++;
  const ranges: number[] = [];
  for (let first = true;; first = false) {
    const [c, after] = [p.chars[p.at], p.chars[p.at + 1]];
    if (c === undefined || (c === "[" && after === ":")) notTaken(); // unclosed; POSIX classes
    if (c === "]" && !first) break;
    if (c === "\\" && after in PERL_CLASSES) {
      ranges.push(...PERL_CLASSES[after]);
      p.at += 2;
      continue;
    }
    const lo = parseClassChar(p);
    let hi = lo;
    if (p.chars[p.at] === "-" && p.chars[p.at + 1] !== "]" && p.chars[p.at + 1] !== undefined) {
      p.at++;
      hi = parseClassChar(p);
      if (hi < lo) notTaken();
    }
    ranges.push(lo, hi);
  }
  p.at++;
  return { op: "set", ranges, negated };
}

function parseClassChar(p: Parser): number {
  const c = p.chars[p.at++];
  return c === "\\" ? parseEscape(p) : codePoint(c);
}

// After `\`: ASCII punctuation stands for itself, as do RE2's control escapes; the rest
// (`\b`, `\pL`, `\x41`, octal, backreferences) is RE2's to judge.
function parseEscape(p: Parser): number {
  const c = p.chars[p.at++] ?? notTaken();
  if (codePoint(c) < 0x80 && !/^[0-9A-Za-z]$/.test(c)) return codePoint(c);
  return CONTROL_ESCAPES[c] ?? notTaken();
}

function complement(ranges: number[]): number[] {
  const out: number[] = [];
  let from = 0;
  for (let i = 0; i < ranges.length; i += 2) {
    if (ranges[i] > from) out.push(from, ranges[i] - 1);
    from = ranges[i + 1] + 1;
  }
  if (from <= MAX_RUNE) out.push(from, MAX_RUNE);
  return out;
}

type State =
  | { op: "match" }
  | { op: "set"; ranges: number[]; negated: boolean; next: number }
  | { op: "split"; next: number; or: number }
  | { op: "begin" | "end"; next: number };

// Adds the states that match `node` then go on to `next`, and returns the first: built back to
// front, so each piece knows where it leads when it is made.
function emit(node: Node, { states, next }: { states: State[]; next: number }): number {
  const add = (state: State) => {
    if (states.length >= MAX_STATES) notTaken();
    return states.push(state) - 1;
  };
  switch (node.op) {
    case "set":
      return add({ ...node, next });
    case "begin":
    case "end":
      return add({ op: node.op, next });
    case "cat":
      return node.subs.reduceRight((after, sub) => emit(sub, { states, next: after }), next);
    case "alt": {
      const firsts = node.subs.map((sub) => emit(sub, { states, next }));
      return firsts.reduceRight((rest, first) => add({ op: "split", next: first, or: rest }));
    }
    case "repeat": {
      const { sub, min, max } = node;
      let first = next, copies = min;
      if (max < 0) {
        // x{n,}: n - 1 copies, then x+ (a loop back through one copy); x* when n is 0.
        const loop = add({ op: "split", next: -1, or: next });
        const body = emit(sub, { states, next: loop });
        (states[loop] as { next: number }).next = body;
        first = min === 0 ? loop : body;
        copies = Math.max(min - 1, 0);
      } else {
        // x{n,m}: n copies, then m - n nested optional ones: x{1,3} is x(x(x)?)?.
        for (let i = min; i < max; i++) {
          first = add({ op: "split", next: emit(sub, { states, next: first }), or: next });
        }
      }
      for (let i = 0; i < copies; i++) first = emit(sub, { states, next: first });
      return first;
    }
  }
}

// Thompson's simulation: the states alive before each character, each at most once, with the
// start added at every position since a match may begin anywhere. Stops at the first match.
function search(states: State[], { start, text }: { start: number; text: number[] }): boolean {
  const seen = new Int32Array(states.length).fill(-1); // the position a state last joined at
  const pending: number[] = [];
  // Adds `from` and what it reaches reading nothing at `at` to `list`: true on reaching a match.
  const follow = (list: number[], from: number, at: number): boolean => {
    pending.push(from);
    while (pending.length > 0) {
      const i = pending.pop()!;
      if (seen[i] === at) continue;
      seen[i] = at;
      const state = states[i];
      if (state.op === "match") return true;
      if (state.op === "set") list.push(i);
      else if (state.op === "split") pending.push(state.or, state.next);
      else if (state.op === "begin" ? at === 0 : at === text.length) pending.push(state.next);
    }
    return false;
  };
  let alive: number[] = [];
  for (let at = 0;; at++) {
    if (follow(alive, start, at)) return true;
    if (at === text.length) return false;
    const next: number[] = [];
    for (const i of alive) {
      const state = states[i] as Extract<State, { op: "set" }>;
      if (inSet(state, text[at]) && follow(next, state.next, at + 1)) return true;
    }
    alive = next;
  }
}

function inSet({ ranges, negated }: { ranges: number[]; negated: boolean }, c: number): boolean {
  let found = false;
  for (let i = 0; i < ranges.length && !found; i += 2) found = ranges[i] <= c && c <= ranges[i + 1];
  return found !== negated;
}
