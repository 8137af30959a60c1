import assert from "node:assert/strict";
import { join } from "node:path";
import { createLogger } from "../lib/log.ts";
import { cli, tempDir } from "./_cli.ts";

Deno.test("text logs escape control characters in messages and fields as \\x1b", () => {
  const lines: string[] = [];
  const log = createLogger({ write: (l) => lines.push(l) });
  log.log("warn", "Hook said \x1b]0;pwned\x07", { path: "/p/a\x1b[31mb", detail: "x\ny", n: 1 });
  assert.equal(
    lines[0],
    "tyhooks: warn: Hook said \\x1b]0;pwned\\x07 (path=/p/a\\x1b[31mb detail=x\\x0ay n=1)\n",
  );
});

Deno.test("a plugin dir whose name holds ESC reaches stderr escaped, never raw", async () => {
  const root = await tempDir({ prefix: "tyhooks-log-" });
  const dir = join(root, "evil\x1b[31mred");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(join(dir, "plugin.yaml"), "name: [\n");
  const result = await cli(["plugins", "list", "--plugins-dir", root]);
  assert.ok(!result.stderr.includes("\x1b"), JSON.stringify(result.stderr));
  assert.match(result.stderr, /evil\\x1b\[31mred\/plugin\.yaml/);
});
