import assert from "node:assert/strict";
import { configDir } from "../lib/dirs.ts";

function withEnv(vars: Record<string, string>, fn: () => void): void {
  const saved = Object.fromEntries(Object.keys(vars).map((k) => [k, Deno.env.get(k)]));
  try {
    for (const [k, v] of Object.entries(vars)) Deno.env.set(k, v);
    fn();
  } finally {
    for (const [k, v] of Object.entries(saved)) {
      if (v === undefined) Deno.env.delete(k);
      else Deno.env.set(k, v);
    }
  }
}

Deno.test("configDir() on macOS is $HOME/Library/Application Support even with XDG_CONFIG_HOME, as Go's", () => {
  withEnv({ HOME: "/Users/me", XDG_CONFIG_HOME: "/xdg" }, () => {
    assert.equal(configDir({ os: "darwin" }), "/Users/me/Library/Application Support");
  });
});

Deno.test("configDir() on Linux is $XDG_CONFIG_HOME when set, else $HOME/.config", () => {
  withEnv({ HOME: "/home/me", XDG_CONFIG_HOME: "/xdg" }, () => {
    assert.equal(configDir({ os: "linux" }), "/xdg");
  });
  withEnv({ HOME: "/home/me", XDG_CONFIG_HOME: "" }, () => {
    assert.equal(configDir({ os: "linux" }), "/home/me/.config");
  });
});
