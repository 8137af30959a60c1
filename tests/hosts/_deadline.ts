/**
 * SPEC holds pick-host to `--timeout` + 1 s. Measured from outside, a run also pays Deno's start
 * and module loading, which a machine busy with other work can stretch by seconds. So tests
 * measure that cost the same way just before (pick-host on a hosts file with no host, which
 * returns at once) and allow it on top of the bound.
 */

import { join } from "node:path";
import { startupMs, tempDir } from "../_cli.ts";

/** Wall time of a pick-host run that probes nothing: Deno's start and tyhooks' loading. */
export async function pickHostStartupMs(env: Record<string, string> = {}): Promise<number> {
  const hosts = join(await tempDir({ prefix: "tyhooks-empty-hosts-" }), "hosts");
  await Deno.writeTextFile(hosts, "# no host\n");
  return startupMs(["pick-host", "--hosts", hosts], { env });
}
