import assert from "node:assert/strict";
import { isEmptyDecision, parseRouteOutput } from "../../lib/resolve/route_output.ts";

Deno.test("parseRouteOutput() reads the three keys, case-insensitive and trimmed", () => {
  const d = parseRouteOutput("  claude_config_dir =  /p/work \nHold=1\n reason = busy day \n");
  assert.deepEqual(d, { claude_config_dir: "/p/work", hold: true, reason: "busy day" });
});

Deno.test("parseRouteOutput() skips blank lines, # comments and lines without =", () => {
  const d = parseRouteOutput("\n# CLAUDE_CONFIG_DIR=/commented\n   \njust talking\nREASON=ok\n");
  assert.deepEqual(d, { claude_config_dir: "", hold: false, reason: "ok" });
});

Deno.test("parseRouteOutput() accepts CRLF line endings", () => {
  const d = parseRouteOutput("CLAUDE_CONFIG_DIR=/p/a\r\nREASON=windows\r\n");
  assert.deepEqual(d, { claude_config_dir: "/p/a", hold: false, reason: "windows" });
});

Deno.test("parseRouteOutput() strips one pair of surrounding quotes after trimming", () => {
  assert.equal(
    parseRouteOutput('CLAUDE_CONFIG_DIR= "/p/with space" ').claude_config_dir,
    "/p/with space",
  );
  assert.equal(parseRouteOutput("REASON='single'").reason, "single");
  assert.equal(parseRouteOutput(`REASON="'inner kept'"`).reason, "'inner kept'");
  assert.equal(parseRouteOutput(`REASON="unbalanced'`).reason, `"unbalanced'`);
  assert.equal(parseRouteOutput(`REASON="`).reason, `"`);
  assert.equal(parseRouteOutput(`REASON=""`).reason, "");
});

Deno.test("parseRouteOutput() keeps = signs inside a value", () => {
  assert.equal(parseRouteOutput("REASON=a=b=c").reason, "a=b=c");
});

Deno.test("parseRouteOutput() takes HOLD or DEFER as truthy for 1, true, yes, y, on in any case", () => {
  for (const key of ["HOLD", "DEFER", "hold", "Defer"]) {
    for (const value of ["1", "true", "yes", "y", "on", "TRUE", "Yes", "Y", "ON", '"on"']) {
      assert.equal(parseRouteOutput(`${key}=${value}`).hold, true, `${key}=${value}`);
    }
    for (const value of ["0", "false", "no", "off", "", "2", "held"]) {
      assert.equal(parseRouteOutput(`${key}=${value}`).hold, false, `${key}=${value}`);
    }
  }
});

Deno.test("parseRouteOutput() ignores unknown keys, and the last of a repeated key wins", () => {
  const d = parseRouteOutput("PROFILE=/x\nCLAUDE_CONFIG_DIR=/first\nCLAUDE_CONFIG_DIR=/second\n");
  assert.equal(d.claude_config_dir, "/second");
  assert.equal(parseRouteOutput("HOLD=1\nDEFER=no").hold, false);
});

Deno.test("isEmptyDecision() is true unless the decision holds or names a config dir", () => {
  assert.ok(isEmptyDecision(parseRouteOutput("REASON=only a reason\n")));
  assert.ok(isEmptyDecision(parseRouteOutput("")));
  assert.ok(!isEmptyDecision(parseRouteOutput("DEFER=y\n")));
  assert.ok(!isEmptyDecision(parseRouteOutput("CLAUDE_CONFIG_DIR=/p\n")));
});
