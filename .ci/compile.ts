/**
 * `deno task compile`: runs `deno compile` with the task's arguments once its runtime base
 * (`denort`) can be had: `DENORT_BIN`, Deno's download cache, or Deno's download site answering.
 * Without any of them `deno compile` would fail with a backtrace and leave an empty output dir;
 * this says why in one line instead, and leaves nothing behind.
 */

import { dirname } from "node:path";

const args = Deno.args;
const denoVersion = Deno.version.deno;

/** The value of `--name VALUE` or `--name=VALUE` in the arguments, if given. */
function flag(names: string[]): string | undefined {
  for (let i = 0; i < args.length; i++) {
    for (const name of names) {
      if (args[i] === name) return args[i + 1];
      if (args[i].startsWith(`${name}=`)) return args[i].slice(name.length + 1);
    }
  }
  return undefined;
}

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

/** Why the runtime base cannot be had, or undefined when it can. */
async function missingBase(): Promise<string | undefined> {
  const given = Deno.env.get("DENORT_BIN");
  if (given) {
    return await exists(given) ? undefined : `DENORT_BIN names "${given}", which is missing`;
  }
  const target = flag(["--target"]) ?? Deno.build.target;
  const zip = `denort-${target}.zip`;
  const info = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "null",
  }).output();
  const denoDir = JSON.parse(new TextDecoder().decode(info.stdout)).denoDir;
  if (await exists(`${denoDir}/dl/release/v${denoVersion}/${zip}`)) return undefined;
  const url = `https://dl.deno.land/release/v${denoVersion}/${zip}`;
  try {
    const answer = await fetch(url, { method: "HEAD", signal: AbortSignal.timeout(15_000) });
    return answer.ok ? undefined : `"${url}" answered ${answer.status}`;
  } catch (error) {
    const cause = (error as Error).cause ?? error;
    const why = String((cause as Error).message ?? cause).split(": ").at(-1);
    return `"${url}" cannot be reached (${why})`;
  }
}

const missing = await missingBase();
if (missing !== undefined) {
  console.error(
    `deno task compile: Cannot get the runtime base of deno compile (denort ${denoVersion}): ` +
      `${missing} (hint: set DENORT_BIN to a denort ${denoVersion} file, or run where that site answers)`,
  );
  Deno.exit(1);
}

const output = flag(["--output", "-o"]);
const outDir = output === undefined ? undefined : dirname(output);
const hadOutDir = outDir === undefined || await exists(outDir);
const compiled = await new Deno.Command(Deno.execPath(), { args: ["compile", ...args] }).output();
if (!compiled.success && !hadOutDir) {
  // deno compile makes the dir before it fails; an empty one is only clutter.
  await Deno.remove(outDir!).catch(() => {});
}
Deno.exit(compiled.code);
