import assert from "node:assert/strict";
import { escapeControl, hasControl, quoted, stripControl } from "../lib/text.ts";

Deno.test("has, escape, strip and quoted agree on one class of control characters: C0, DEL and C1", () => {
  for (let code = 0; code < 0x180; code++) {
    const c = String.fromCharCode(code);
    const control = code < 0x20 || (code >= 0x7f && code < 0xa0);
    assert.equal(hasControl(`a${c}b`), control, `U+${code.toString(16)}`);
    assert.equal(escapeControl(c), control ? `\\x${code.toString(16).padStart(2, "0")}` : c);
    assert.equal(stripControl(`a${c}b`), control ? "ab" : `a${c}b`);
    assert.equal(hasControl(quoted(c)), false, `U+${code.toString(16)}`);
    assert.equal(JSON.parse(quoted(c)), c);
  }
});
