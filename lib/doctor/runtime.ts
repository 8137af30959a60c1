/**
 * `doctor`'s runtime checks: the Deno tyhooks runs on against the release it is pinned to, how
 * this tyhooks is installed, and whether it has every grant of the `tyhooks` permission set.
 *
 * @module
 */

import { type Check, passed, problem } from "./check.ts";
import { DENO_VERSION } from "../version.ts";
import { basename, dirname } from "../paths.ts";
import { quoted } from "../text.ts";

/** How this tyhooks runs, as far as it can tell. */
export type InstallKind = "compiled" | "npm" | "bundle" | "source" | "unknown";

/** The grants deno.json's `tyhooks` permission set gives, and why each is needed. */
const GRANTS: readonly { name: Deno.PermissionName; why: string }[] = [
  { name: "read", why: "plugins, manifests, the index cache" },
  { name: "write", why: "the index cache, the spool, the socket" },
  { name: "env", why: "the directories, the hooks' environment" },
  { name: "run", why: "hooks, actions, services" },
  { name: "sys", why: "the user id that ownership is checked against" },
  { name: "net", why: "serve" },
];

/** The runtime checks, in the order `doctor` prints them. */
export function runtimeChecks(): Check[] {
  const install = installKind();
  return [versionCheck(install.kind), installCheck(install), grantsCheck(install.kind)];
}

/**
 * How this tyhooks was started: a `deno compile` binary, the npm package's `lib/main.js` (its
 * launcher `bin/tyhooks` runs that), the one-file bundle, or `main.ts` from a checkout.
 */
export function installKind(): { kind: InstallKind; path: string } {
  if (Deno.build.standalone) return { kind: "compiled", path: Deno.execPath() };
  const url = new URL(Deno.mainModule);
  if (url.protocol !== "file:") return { kind: "unknown", path: Deno.mainModule };
  const main = decodeURIComponent(url.pathname);
  if (basename(main) === "main.js" && basename(dirname(main)) === "lib") {
    return { kind: "npm", path: dirname(dirname(main)) };
  }
  if (basename(main) === "tyhooks.js") return { kind: "bundle", path: main };
  if (basename(main) === "main.ts") return { kind: "source", path: dirname(main) };
  return { kind: "unknown", path: main };
}

function versionCheck(kind: InstallKind): Check {
  const running = Deno.version.deno;
  if (running === DENO_VERSION) {
    return passed("runtime", `Deno ${running}, the release tyhooks is pinned to`);
  }
  const fix = kind === "compiled"
    ? `build it again with Deno ${DENO_VERSION}: npx --yes deno@${DENO_VERSION} task compile`
    : kind === "npm"
    ? "install the npm package again: npm install -g tyhooks (it carries its pinned Deno)"
    : `deno upgrade --version ${DENO_VERSION}`;
  return problem("warn", "runtime", {
    detail: `Deno ${running}, but tyhooks is built and tested with Deno ${DENO_VERSION}`,
    fix,
  });
}

function installCheck({ kind, path }: { kind: InstallKind; path: string }): Check {
  const what = {
    compiled: "a compiled binary",
    npm: "the npm package",
    bundle: "the one-file bundle",
    source: "source, from the checkout",
    unknown: "an entry point tyhooks does not recognise",
  }[kind];
  return passed("install", `${what}: ${quoted(path)}`);
}

function grantsCheck(kind: InstallKind): Check {
  const missing = GRANTS.filter((grant) =>
    Deno.permissions.querySync({ name: grant.name }).state !== "granted"
  );
  if (missing.length === 0) return passed("grants", "every grant of the tyhooks permission set");
  const flags = missing.map((grant) => `--allow-${grant.name} (${grant.why})`).join(", ");
  return problem("fail", "grants", {
    detail: `running without ${flags}`,
    fix: kind === "compiled"
      ? "build it again with deno task compile, which grants the tyhooks permission set"
      : "run it with the tyhooks permission set: deno task cli, or deno run -P=tyhooks main.ts",
  });
}
