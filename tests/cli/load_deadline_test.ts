/**
 * A consulted call's `--deadline` counts the plugin load too (SPEC, "Trust boundaries"): a plugins
 * dir too big to walk in time ends in no answer, and a guard that could not be loaded blocks.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { cli, makeTree } from "../_cli.ts";

/** A tree of 9,000 empty folders (far more than any walk does in 1 ms) beside a guard and a router. */
async function bigTree(): Promise<string> {
  const plugins = await makeTree({
    "guard/plugin.yaml": "name: guard\nhooks:\n  pre_tool_call: allow.sh\n",
    "guard/allow.sh": "#!/bin/sh\nexit 0\n",
    "router/plugin.yaml": "name: router\nhooks:\n  task.route: route.sh\n",
    "router/route.sh": "#!/bin/sh\necho CLAUDE_CONFIG_DIR=/profiles/work\n",
  });
  for (let i = 0; i < 90; i++) {
    const collection = join(plugins, `c${i}`);
    await Deno.mkdir(collection);
    await Promise.all(
      Array.from({ length: 100 }, (_, j) => Deno.mkdir(join(collection, `d${j}`))),
    );
  }
  return plugins;
}

Deno.test("a --deadline the plugin load overruns blocks tool pre and leaves route undecided", async () => {
  const plugins = await bigTree();
  const env = { TYHOOKS_NO_CACHE: "1" };
  const base = ["--plugins-dir", plugins, "--deadline", "1ms"];
  const pre = await cli(["tool", "pre", "--tool", "bash", ...base], { env });
  assert.equal(pre.code, 2, pre.stderr);
  assert.match(JSON.parse(pre.stdout).reason, /Plugins not loaded within the 1 ms deadline/);
  const route = await cli(["route", ...base], { env });
  assert.equal(route.code, 0, route.stderr);
  assert.equal(route.stdout, "");
  assert.match(route.stderr, /Plugins not loaded within the 1 ms deadline/);
  // With time to load, the same tree answers: the deadline, not the tree, made the difference.
  const allowed = await cli(["tool", "pre", "--tool", "bash", "--plugins-dir", plugins], { env });
  assert.equal(allowed.code, 0, allowed.stderr);
  const routed = await cli(["route", "--plugins-dir", plugins], { env });
  assert.match(routed.stdout, /^PLUGIN=router\nCLAUDE_CONFIG_DIR=\/profiles\/work\n/);
});
