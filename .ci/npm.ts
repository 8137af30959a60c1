/**
 * `deno task npm [OUT_DIR]`: builds the npm package `tyhooks` in dist/npm/ (or OUT_DIR), for
 * `npm pack` and `npm install -g` (README "Install"). It holds:
 *
 * - `lib/main.js` and its chunks: tyhooks bundled with code splitting, so a call loads only the
 *   chunks its command needs (zod, yaml and re2js stay lazy, as from source);
 * - `lib/tyhooks.js`: the single-file bundle, what `hosts sync` sends to a host;
 * - `bin/tyhooks`: a POSIX sh launcher that runs `lib/main.js` with the Deno binary of the
 *   package's pinned `deno` dependency, with the grants and V8 flags of the binary;
 * - `package.json` (version from deno.json) and a short README.
 *
 * Needs only what `deno bundle` needs: the npm packages in Deno's cache; no network.
 */

import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import config from "../deno.json" with { type: "json" };
import { RUN_FLAGS } from "../lib/process/detach.ts";
import { DENO_VERSION } from "../lib/version.ts";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");
const out = resolve(Deno.args[0] ?? join(ROOT, "dist", "npm"));

if (Deno.version.deno !== DENO_VERSION) {
  console.error(
    `Cannot build the npm package with Deno ${Deno.version.deno}: it runs Deno ${DENO_VERSION}` +
      `\nhint: npx --yes deno@${DENO_VERSION} task npm`,
  );
  Deno.exit(1);
}

async function deno(args: string[]): Promise<void> {
  const run = await new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    env: { NO_COLOR: "1" },
    stdout: "inherit",
    stderr: "inherit",
  }).output();
  if (!run.success) {
    console.error(`Cannot build the npm package: "deno ${args.join(" ")}" failed`);
    Deno.exit(1);
  }
}

/**
 * Turns each `import("./chunk.js")` into `import(String("./chunk.js"))`. Deno builds the graph of
 * every literal import, dynamic ones included, at each start: with the chunks in it, every call
 * reads all of them (zod's 760 kB too), and a warm `route` took 0.94x the source tree's time
 * against 0.82x without (tests/bench/README.md); a computed specifier is loaded only when the call
 * reaches it. Checks afterwards that every chunk is still named somewhere and every named chunk
 * exists.
 */
async function lazyChunks(dir: string): Promise<void> {
  const files = [...Deno.readDirSync(dir)].map((e) => e.name).filter((n) => n.endsWith(".js"));
  const named = new Set<string>();
  for (const name of files) {
    const path = join(dir, name);
    const code = (await Deno.readTextFile(path)).replace(
      /\bimport\("\.\/([\w.-]+\.js)"\)/g,
      (_, chunk: string) => `import(String("./${chunk}"))`,
    );
    await Deno.writeTextFile(path, code);
    for (
      const [, chunk] of code.matchAll(
        /(?:\bfrom |\bimport |\bimport\(String\()"\.\/([\w.-]+\.js)"/g,
      )
    ) named.add(chunk);
  }
  const unnamed = files.filter((name) => name !== "main.js" && !named.has(name));
  const missing = [...named].filter((name) => !files.includes(name));
  if (unnamed.length > 0 || missing.length > 0) {
    console.error(
      `Cannot build the npm package: its split bundle does not hold together: never imported ${
        JSON.stringify(unnamed)
      }, missing ${JSON.stringify(missing)}`,
    );
    Deno.exit(1);
  }
}

function launcher(): string {
  const flags = ["--quiet", "--no-prompt", "--no-config", "--no-lock", "--no-remote", "--no-npm"];
  return `#!/bin/sh
# tyhooks from npm: runs lib/main.js with the Deno of this package's "deno" dependency, with the
# grants and V8 flags of the tyhooks binary. Written by .ci/npm.ts.

# npm links this file into its bin dir: <prefix>/bin for a global install, node_modules/.bin for a
# project's. Those two links are recognised without starting a process (each costs milliseconds of
# every call); any other is followed with readlink.
case $0 in */*) here=\${0%/*} ;; *) here=. ;; esac
if [ "$here/../lib/node_modules/tyhooks/bin/tyhooks" -ef "$0" ]; then
  pkg=$here/../lib/node_modules/tyhooks
elif [ "$here/../tyhooks/bin/tyhooks" -ef "$0" ]; then
  pkg=$here/../tyhooks
else
  self=$0
  while [ -L "$self" ]; do
    link=$(readlink -- "$self") || break
    case $link in
    /*) self=$link ;;
    *) case $self in */*) self=\${self%/*}/$link ;; *) self=$link ;; esac ;;
    esac
  done
  case $self in */*) pkg=\${self%/*}/.. ;; *) pkg=.. ;; esac
fi

# Where npm put "deno", as Node resolves it: in the package's own node_modules (a global install),
# or in an ancestor's (a project's, hoisted). Its install script links the binary into it; without
# install scripts the binary is only in the platform package beside it.
deno=
dir=$pkg
while :; do
  if [ -d "$dir/node_modules/deno" ]; then
    deno=$dir/node_modules/deno/deno
    [ -f "$deno" ] && [ -x "$deno" ] && break
    case $(uname -s)-$(uname -m) in
    Linux-x86_64 | Linux-amd64) deno=$dir/node_modules/@deno/linux-x64-glibc/deno ;;
    Linux-aarch64 | Linux-arm64) deno=$dir/node_modules/@deno/linux-arm64-glibc/deno ;;
    Darwin-x86_64) deno=$dir/node_modules/@deno/darwin-x64/deno ;;
    Darwin-arm64) deno=$dir/node_modules/@deno/darwin-arm64/deno ;;
    esac
    [ -f "$deno" ] && [ -x "$deno" ] && break
    deno=
    break
  fi
  [ "$dir" = / ] && break
  # Up by names, from the package's absolute path without ".." or links.
  if [ "$dir" = "$pkg" ]; then dir=$(cd -P -- "$dir" && pwd -P) || break; fi
  dir=\${dir%/*}
  [ -n "$dir" ] || dir=/
done

if [ -z "$deno" ]; then
  where=$(cd -P -- "$pkg" 2>/dev/null && pwd -P) || where=$pkg
  echo "tyhooks: Cannot find the Deno binary of the npm package \\"deno\\" ${DENO_VERSION} from \\"$where\\"" >&2
  echo "hint: reinstall tyhooks with npm, which installs it for this platform" >&2
  # A guard for an agent (--claude) must block when tyhooks cannot run, unless told to allow.
  claude=no
  allow=no
  previous=
  for arg; do
    case $arg in
    --) break ;;
    --claude | --claude=*) claude=yes ;;
    --on-failure=allow) allow=yes ;;
    allow) [ "$previous" = --on-failure ] && allow=yes ;;
    esac
    previous=$arg
  done
  [ "$claude" = yes ] && [ "$allow" = no ] && exit 2
  exit 1
fi

export DENO_NO_UPDATE_CHECK=1
# What runs this tyhooks again (an agent's hook command, a detached run): this file, by a path
# that holds from any directory.
case $0 in /*) TYHOOKS_LAUNCHER=$0 ;; *) TYHOOKS_LAUNCHER=$PWD/$0 ;; esac
export TYHOOKS_LAUNCHER
exec "$deno" run ${[...flags, ...RUN_FLAGS].join(" ")} "$pkg/lib/main.js" "$@"
`;
}

function packageJson(): string {
  return JSON.stringify(
    {
      name: "tyhooks",
      version: config.version,
      description:
        "Runs the plugins and hooks of ty (taskyou) outside of ty: task events, routing, placement, tool-call guards",
      bin: { tyhooks: "bin/tyhooks" },
      files: ["bin/", "lib/", "README.md"],
      os: ["linux", "darwin"],
      dependencies: { deno: DENO_VERSION },
    },
    null,
    2,
  ) + "\n";
}

function readme(): string {
  return `# tyhooks

tyhooks runs the plugin and hook system of [ty](https://github.com/bborn/taskyou) outside of ty: a
host program calls it to fire task events, to ask under which profile and on which host a task
runs, and to ask whether an agent's tool call is allowed (\`tyhooks tool pre --claude\` for Claude
Code). Plugins written for ty work unchanged, from the same place (\`~/.config/task/plugins/\`).

This package carries its own Deno (the npm package \`deno@${DENO_VERSION}\`): it needs no \`deno\` on
PATH and no network once installed. \`bin/tyhooks\` is a shell script that runs tyhooks' bundled
code (\`lib/\`) with that Deno.

\`\`\`sh
npm install -g ./tyhooks-${config.version}.tgz   # or: npm install -g tyhooks
tyhooks --help
tyhooks plugins list
\`\`\`

Everything else (a first plugin in five minutes, every command, the security model, the guides) is
in the README at the root of the tyhooks repository, which this package is built from with
\`deno task npm\`.
`;
}

await Deno.remove(out, { recursive: true }).catch((error) => {
  if (!(error instanceof Deno.errors.NotFound)) throw error;
});
const lib = join(out, "lib");
// `--platform browser` takes yaml's ES module build: its Node build reaches node:process through
// a `require` helper that lands in the chunk every other chunk imports, so each start would load
// Deno's Node compatibility layer (~60 modules), and split that way its exports are lost
// (`yaml.LineCounter is not a constructor`). tyhooks' own `node:` imports stay as they are.
await deno([
  "bundle",
  "--quiet",
  "--platform",
  "browser",
  "--code-splitting",
  "--outdir",
  lib,
  "main.ts",
]);
await lazyChunks(lib);
// As `deno task bundle` builds it.
await deno([
  "bundle",
  "--quiet",
  "--platform",
  "deno",
  "--output",
  join(lib, "tyhooks.js"),
  "main.ts",
]);
await Deno.mkdir(join(out, "bin"));
await Deno.writeTextFile(join(out, "bin", "tyhooks"), launcher(), { mode: 0o755 });
await Deno.chmod(join(out, "bin", "tyhooks"), 0o755);
await Deno.writeTextFile(join(out, "package.json"), packageJson());
await Deno.writeTextFile(join(out, "README.md"), readme());
console.log(`npm package tyhooks ${config.version} in ${out}`);
