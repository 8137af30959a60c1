import assert from "node:assert/strict";
import { cli } from "../_cli.ts";

Deno.test("plugins dir prints --plugins-dir first of all", async () => {
  const result = await cli(["plugins", "dir", "--plugins-dir", "/flag"], {
    env: { TY_PLUGINS_DIR: "/env", XDG_CONFIG_HOME: "/xdg", HOME: "/home/u" },
  });
  assert.deepEqual(result, { code: 0, stdout: "/flag\n", stderr: "" });
});

Deno.test("plugins dir follows $TY_PLUGINS_DIR before the config dir", async () => {
  const result = await cli(["plugins", "dir"], {
    env: { TY_PLUGINS_DIR: "/env", XDG_CONFIG_HOME: "/xdg", HOME: "/home/u" },
  });
  assert.deepEqual(result, { code: 0, stdout: "/env\n", stderr: "" });
});

Deno.test("plugins dir uses $XDG_CONFIG_HOME/task/plugins when set", async () => {
  const result = await cli(["plugins", "dir"], {
    env: { TY_PLUGINS_DIR: "", XDG_CONFIG_HOME: "/xdg", HOME: "/home/u" },
  });
  assert.deepEqual(result, { code: 0, stdout: "/xdg/task/plugins\n", stderr: "" });
});

Deno.test("plugins dir falls back to $HOME/.config/task/plugins (Linux)", {
  ignore: Deno.build.os === "darwin",
}, async () => {
  const result = await cli(["plugins", "dir"], {
    env: { TY_PLUGINS_DIR: "", XDG_CONFIG_HOME: "", HOME: "/home/u" },
  });
  assert.deepEqual(result, { code: 0, stdout: "/home/u/.config/task/plugins\n", stderr: "" });
});
