import assert from "node:assert/strict";
import { valueIn } from "./_cli.ts";

// configDir() reads HOME and XDG_CONFIG_HOME: set in a child's environment, never in this
// process's, which parallel test modules share.
const configDirWith = (env: Record<string, string>, os: string) =>
  valueIn({ configDir: "lib/paths.ts" }, `configDir({ os: "${os}" })`, { env });

Deno.test("configDir() on macOS is $HOME/Library/Application Support even with XDG_CONFIG_HOME, as Go's", async () => {
  assert.equal(
    await configDirWith({ HOME: "/Users/me", XDG_CONFIG_HOME: "/xdg" }, "darwin"),
    "/Users/me/Library/Application Support",
  );
});

Deno.test("configDir() on Linux is $XDG_CONFIG_HOME when set, else $HOME/.config", async () => {
  assert.equal(await configDirWith({ HOME: "/home/me", XDG_CONFIG_HOME: "/xdg" }, "linux"), "/xdg");
  assert.equal(
    await configDirWith({ HOME: "/home/me", XDG_CONFIG_HOME: "" }, "linux"),
    "/home/me/.config",
  );
});
