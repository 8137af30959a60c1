/**
 * `doctor`'s plugin checks: the plugins and legacy hooks dirs (nobody else's to change, as the
 * loader's StrictModes wants), and each problem `plugins validate` finds, with its fix.
 *
 * @module
 */

import { type Check, passed, problem, withFix } from "./check.ts";
import { unsafeMode } from "../fs.ts";
import type { LoadWarning } from "../plugins/types.ts";
import { quoted } from "../text.ts";

/** The plugin checks of `pluginsDir` and `hooksDir`, in the order `doctor` prints them. */
export async function pluginChecks(
  pluginsDir: string,
  hooksDir: string,
): Promise<Check[]> {
  const checks = [
    dirCheck("plugins dir", pluginsDir, { missing: "warn" }),
    dirCheck("hooks dir", hooksDir, { missing: "ok" }),
  ];
  const { validatePlugins } = await import("../plugins/validate.ts");
  const result = await validatePlugins(pluginsDir);
  const count = `${result.checked} ${result.checked === 1 ? "plugin" : "plugins"}`;
  checks.push(
    result.ok
      ? passed("plugins", `${count}, and plugins validate finds no problem`)
      : problem("fail", "plugins", {
        detail: `plugins validate finds ${result.problems.length} ${
          result.problems.length === 1 ? "problem" : "problems"
        } in ${count}, each below`,
        fix: "tyhooks plugins validate",
      }),
    ...result.problems.map((p) => problemCheck("plugin", p)),
  );
  const { readLegacyHooks } = await import("../plugins/listing.ts");
  const legacy = await readLegacyHooks(hooksDir);
  if (legacy.problems.length === 0) {
    const n = legacy.hooks.length;
    checks.push(passed("legacy hooks", `${n} ${n === 1 ? "hook" : "hooks"}, none with a problem`));
  }
  checks.push(...legacy.problems.map((p) => problemCheck("legacy hook", p)));
  return checks;
}

// A problem of the lint: where it is, what is wrong, and its hint as the fix.
function problemCheck(name: string, p: LoadWarning): Check {
  const where = p.line === null ? p.path : `${p.path}:${p.line}:${p.column ?? 1}`;
  const { detail, fix } = withFix(
    p.message,
    `edit ${quoted(p.path)}${p.line === null ? "" : ` at line ${p.line}`}, then: ` +
      "tyhooks plugins validate",
  );
  return problem("fail", name, { detail: `${where}: ${detail}`, fix });
}

/**
 * A dir tyhooks runs scripts from: a directory, owned by the user or root and writable by
 * nobody else (what the loader warns about for each plugin); `missing` says what its absence is.
 */
function dirCheck(name: string, dir: string, options: { missing: "ok" | "warn" }): Check {
  let info: Deno.FileInfo;
  try {
    info = Deno.statSync(dir);
  } catch (error) {
    if (!(error instanceof Deno.errors.NotFound)) {
      return problem("fail", name, {
        detail: `${quoted(dir)} cannot be read: ${(error as Error).message}`,
        fix: `ls -ld ${quoted(dir)}, and make it readable by you`,
      });
    }
    const detail = `${quoted(dir)} does not exist, so it holds nothing`;
    return options.missing === "ok"
      ? passed(name, detail)
      : problem("warn", name, { detail, fix: `mkdir -p ${quoted(dir)}` });
  }
  if (!info.isDirectory) {
    return problem("fail", name, {
      detail: `${quoted(dir)} is not a directory`,
      fix: `move ${quoted(dir)} away, then: mkdir -p ${quoted(dir)}`,
    });
  }
  const unsafe = unsafeMode(info, dir);
  if (unsafe !== null) {
    return problem("fail", name, { detail: `${quoted(dir)} ${unsafe.reason}`, fix: unsafe.hint });
  }
  return passed(name, `${quoted(dir)}: owned by you or root, and nobody else can write it`);
}
