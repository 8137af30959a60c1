import assert from "node:assert/strict";
import { compileToolMatcher } from "../../lib/plugins/tool_matcher.ts";
import { RE2JS } from "npm:re2js@^2.10.0";

// The names among `names` that `tools` is found in.
function found(tools: string, names: string[]): string[] {
  const matcher = compileToolMatcher(tools);
  assert.ok(matcher, `${tools} not taken`);
  return names.filter((name) => matcher.test(name));
}

Deno.test("compileToolMatcher() finds literals and escaped punctuation anywhere in the name", () => {
  assert.deepEqual(found("bash", ["bash", "run_bash", "Bash", ""]), ["bash", "run_bash"]);
  assert.deepEqual(found("a\\.b\\*", ["a.b*", "axb*", "a.b"]), ["a.b*"]);
  assert.deepEqual(found("\\_\\-\\ \\\\", ["_- \\", "_-\\"]), ["_- \\"]);
  assert.deepEqual(found("x\\ty", ["x\ty", "xty"]), ["x\ty"]);
  assert.deepEqual(found("]}", ["]}", "]"]), ["]}"]);
  assert.deepEqual(found("é😀", ["é😀", "é"]), ["é😀"]);
});

Deno.test("compileToolMatcher() reads a dot as any one code point but newline", () => {
  assert.deepEqual(found("^.$", ["a", "😀", "é", "\v", "\n", "", "ab"]), ["a", "😀", "é", "\v"]);
});

Deno.test("compileToolMatcher() reads classes, ranges, negation and Perl classes as RE2 does", () => {
  const names = ["a", "m", "z", "-", "]", "5", "_", " ", "\n", "\v", "é", "😀", "A"];
  assert.deepEqual(found("^[a-c x-z]$", names), ["a", "z", " "]);
  assert.deepEqual(found("^[]a-]$", names), ["a", "-", "]"]);
  assert.deepEqual(found("^[^a-z]$", names), ["-", "]", "5", "_", " ", "\n", "\v", "é", "😀", "A"]);
  assert.deepEqual(found("^[\\d-]$", names), ["-", "5"]);
  assert.deepEqual(found("^[à-😀]$", names), ["é", "😀"]);
  assert.deepEqual(found("^\\d$", names), ["5"]);
  assert.deepEqual(found("^\\w$", names), ["a", "m", "z", "5", "_", "A"]);
  // RE2's \s is [\t\n\f\r ]: no vertical tab.
  assert.deepEqual(found("^\\s$", names), [" ", "\n"]);
  assert.deepEqual(found("^[\\S]$", names).length, names.length - 2);
  assert.deepEqual(found("^[^\\D]$", names), ["5"]);
  assert.deepEqual(found("^\\W$", names), ["-", "]", " ", "\n", "\v", "é", "😀"]);
});

Deno.test("compileToolMatcher() reads groups, alternation and every repeat", () => {
  const names = ["", "a", "ab", "aa", "aaa", "aaaa", "b", "abab"];
  assert.deepEqual(found("^(a|b)$", names), ["a", "b"]);
  assert.deepEqual(found("^(?:ab)+$", names), ["ab", "abab"]);
  assert.deepEqual(found("^a*$", names), ["", "a", "aa", "aaa", "aaaa"]);
  assert.deepEqual(found("^a+?$", names), ["a", "aa", "aaa", "aaaa"]);
  assert.deepEqual(found("^ab?$", names), ["a", "ab"]);
  assert.deepEqual(found("^a{2}$", names), ["aa"]);
  assert.deepEqual(found("^a{2,}$", names), ["aa", "aaa", "aaaa"]);
  assert.deepEqual(found("^a{1,3}?$", names), ["a", "aa", "aaa"]);
  assert.deepEqual(found("^a{0}$", names), [""]);
  assert.deepEqual(found("^(|a)$", names), ["", "a"]);
  assert.deepEqual(found("^x{1000}$", ["x".repeat(1000), "x".repeat(999)]), ["x".repeat(1000)]);
});

Deno.test("compileToolMatcher() anchors at the start and end of the text only", () => {
  const names = ["bash", "run_bash", "bash\n", "\nbash", "bashrc"];
  assert.deepEqual(found("^bash", names), ["bash", "bash\n", "bashrc"]);
  assert.deepEqual(found("bash$", names), ["bash", "run_bash", "\nbash"]);
  assert.deepEqual(found("\\Abash\\z", names), ["bash"]);
  assert.deepEqual(found("a^b|$x", ["ab", "x", ""]), []);
  assert.deepEqual(found("^$", ["", "a"]), [""]);
});

/** Expressions compileToolMatcher() takes none of, and whether RE2 takes them (it runs those). */
const NOT_OURS: { name: string; re2Takes: boolean; expressions: string[] }[] = [
  {
    name: "compileToolMatcher() leaves syntax beyond its subset to RE2",
    re2Takes: true,
    expressions: [
      "(?i)bash",
      "\\bbash\\b",
      "\\pL",
      "(?P<x>a)",
      "[[:alpha:]]",
      "\\x41",
      "a{,3}",
      "a*{",
      "{",
      "(x|y|z|w|v|u|t|s|r|q){1000}",
    ],
  },
  {
    name: "compileToolMatcher() takes no expression that RE2 refuses",
    re2Takes: false,
    expressions: [
      "(bash",
      "bash)",
      "*",
      "a|+b",
      "a**",
      "a*??",
      "a{2}{3}",
      "a{1001}",
      "a{3,2}",
      "(a{100}){11}",
      "[z-a]",
      "[]",
      "[a-\\d]",
      "\\",
      "\\8",
      "(?!x)",
      "\\é",
    ],
  },
];

for (const { name, re2Takes, expressions } of NOT_OURS) {
  Deno.test(name, () => {
    for (const tools of expressions) {
      if (re2Takes) assert.doesNotThrow(() => RE2JS.compile(tools), tools);
      else assert.throws(() => RE2JS.compile(tools), tools);
      assert.equal(compileToolMatcher(tools), undefined, tools);
    }
  });
}

Deno.test("compileToolMatcher() answers at once for nested repeats on long names", () => {
  const started = performance.now();
  const nested = compileToolMatcher("^(B+)+$")!;
  assert.equal(nested.test("B".repeat(40)), true);
  assert.equal(nested.test("B".repeat(10_000) + "x"), false);
  assert.equal(compileToolMatcher("(a*)*(a|aa)*b")!.test("a".repeat(10_000)), false);
  // A backtracking engine takes hours here; this bound only catches that.
  assert.ok(performance.now() - started < 10_000);
});

// Expressions in (mostly) the subset, from a fixed seed, so a failure names one that repeats.
function generator(seed: number) {
  const next = (n: number) => { // xorshift32
    seed ^= seed << 13;
    seed ^= seed >>> 17;
    seed ^= seed << 5;
    return (seed >>> 0) % n;
  };
  const pick = <T>(items: T[]): T => items[next(items.length)];
  const literals = ["a", "b", "B", "_", "-", "1", "é", "😀", " ", "\\.", "\\-", "\\n", "]", "}"];
  const inClass = ["a", "b-z", "0-9", "\\d", "\\W", "\\s", "-", "é-😀", "\\]", "]", "^", "[", "."];
  const repeats = ["", "", "", "*", "+", "?", "{2}", "{0,2}", "{1,}", "{3,5}", "{0}", "*?", "{2}?"];
  const atom = (depth: number): string => {
    switch (next(depth > 2 ? 5 : 7)) {
      case 0:
        return pick(literals);
      case 1:
        return pick([".", "\\d", "\\w", "\\s", "\\D", "\\S", "^", "$", "\\A", "\\z"]);
      case 2:
        return `[${pick(["", "^"])}${pick(inClass)}${pick(inClass)}]`;
      case 3:
      case 4:
        return pick(literals) + pick(literals);
      case 5:
        return `(${alternation(depth + 1)})`;
      default:
        return `(?:${alternation(depth + 1)})`;
    }
  };
  const concatenation = (depth: number) =>
    Array.from({ length: next(4) }, () => atom(depth) + pick(repeats)).join("");
  const alternation = (depth: number): string => {
    const branches = [concatenation(depth)];
    while (next(3) === 0) branches.push(concatenation(depth));
    return branches.join("|");
  };
  // Metacharacters at random: mostly invalid, or valid in ways the grammar above never writes.
  const soup = () =>
    Array.from({ length: 1 + next(8) }, () => pick([..."ab()[]{}*+?|^$\\.-,0:dDwsAzbp"])).join("");
  const name = () =>
    Array.from({ length: next(8) }, () => pick([..."abB_-1é😀 .\n\v]}\\z0"])).join("");
  return { expression: () => next(2) === 0 ? alternation(0) : soup(), name };
}

Deno.test("compileToolMatcher() agrees with RE2 on every expression it takes and every name", () => {
  const { expression, name } = generator(20240611);
  let taken = 0, valid = 0;
  for (let i = 0; i < 600; i++) {
    const tools = expression() || "a";
    let re2: RE2JS | undefined;
    try {
      re2 = RE2JS.compile(tools);
      valid++;
    } catch {
      // Refused: ours must refuse it too.
    }
    const ours = compileToolMatcher(tools);
    if (ours === undefined) continue;
    taken++;
    assert.ok(re2, `${JSON.stringify(tools)} taken, but RE2 refuses it`);
    for (let j = 0; j < 30; j++) {
      const tool = name();
      assert.equal(
        ours.test(tool),
        re2.test(tool),
        `${JSON.stringify(tools)} on ${JSON.stringify(tool)}`,
      );
    }
  }
  // Most valid expressions are in the subset, so the comparison above is not vacuous.
  assert.ok(taken > valid * 0.85, `${taken} of ${valid} valid expressions taken`);
});
