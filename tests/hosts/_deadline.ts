/**
 * SPEC holds pick-host to `--timeout` + 1 s. Measured from outside, a run also pays Deno's start
 * and module loading, which a machine busy with other work can stretch by seconds. So tests
 * measure that cost the same way just before (pick-host on a hosts file with no host, which
 * returns at once) and allow it on top of the bound.
 */

import { join } from "node:path";
import { cli, tempDir } from "../_cli.ts";

/** Wall time of a pick-host run that probes nothing: Deno's start and tyhooks' loading. */
export async function pickHostStartupMs(env: Record<string, string> = {}): Promise<number> {
  const dir = await tempDir({ prefix: "tyhooks-empty-hosts-" });
  await Deno.writeTextFile(join(dir, "hosts"), "# no host\n");
  const started = performance.now();
  const r = await cli(["pick-host", "--hosts", join(dir, "hosts")], { env });
  if (r.code !== 0) throw new Error(`pick-host with no host failed: ${r.stderr}`);
  return performance.now() - started;
}
