/**
 * The path arithmetic of lib/paths.ts gives what node:path (posix) gives, on a corpus of ordinary
 * and odd paths and every pair of them.
 */

import assert from "node:assert/strict";
import * as node from "node:path";
import * as ours from "../lib/paths.ts";

const CORPUS = [
  "",
  ".",
  "..",
  "/",
  "//",
  "///",
  "a",
  "a/",
  "a//",
  "/a",
  "//a",
  "///a",
  "/a/",
  "/a//",
  "a/b",
  "a//b",
  "/a/b",
  "/a//b",
  "/a/b/",
  "./a",
  "../a",
  "a/..",
  "a/../..",
  "/a/../..",
  "/..",
  "/../a",
  "a/./b/.",
  "./",
  "../",
  ".a",
  "a/.b/..",
  "/tmp/x/../../y/./z/",
  "~/x",
  "a b/c d",
  "é/ü",
  "plugins/p0001/hook.sh",
  "../shared/run.sh",
  "/a/b/../../../c",
];

Deno.test("normalize, isAbsolute, dirname, basename and extname agree with node:path", () => {
  for (const p of CORPUS) {
    assert.equal(ours.normalize(p), node.normalize(p), `normalize(${JSON.stringify(p)})`);
    assert.equal(ours.isAbsolute(p), node.isAbsolute(p), `isAbsolute(${JSON.stringify(p)})`);
    assert.equal(ours.dirname(p), node.dirname(p), `dirname(${JSON.stringify(p)})`);
    assert.equal(ours.basename(p), node.basename(p), `basename(${JSON.stringify(p)})`);
    assert.equal(ours.extname(p), node.extname(p), `extname(${JSON.stringify(p)})`);
  }
  assert.equal(ours.sep, node.sep);
});

Deno.test("join, resolve and relative agree with node:path on every pair", () => {
  assert.equal(ours.join(), node.join());
  assert.equal(ours.resolve(), node.resolve());
  for (const a of CORPUS) {
    assert.equal(ours.resolve(a), node.resolve(a), `resolve(${JSON.stringify(a)})`);
    for (const b of CORPUS) {
      const args = JSON.stringify([a, b]);
      assert.equal(ours.join(a, b), node.join(a, b), `join${args}`);
      assert.equal(ours.join(a, b, a), node.join(a, b, a), `join${args}+a`);
      assert.equal(ours.resolve(a, b), node.resolve(a, b), `resolve${args}`);
      assert.equal(ours.relative(a, b), node.relative(a, b), `relative${args}`);
    }
  }
});
