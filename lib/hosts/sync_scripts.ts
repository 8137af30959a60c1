/**
 * The shell `hosts sync` sends a host over ssh (inspect, unpack, apply: sync.ts says why), and how
 * it reads the answers.
 *
 * @module
 */

import { join } from "../paths.ts";
import type { PayloadFile } from "./payload.ts";

// Where a sync puts things on the host, shared by the inspect and apply scripts. The plugins dir
// is the one tyhooks there reads by default (lib/paths.ts: Go's os.UserConfigDir).
const WHERE = `home=\${HOME:?}
bin=$home/.local/bin
share=$home/.local/share/tyhooks
if [ -n "\${TY_PLUGINS_DIR:-}" ]; then plugins=$TY_PLUGINS_DIR
elif [ "$(uname -s)" = Darwin ]; then plugins="$home/Library/Application Support/task/plugins"
else
  case \${XDG_CONFIG_HOME:-} in
    /*) plugins=$XDG_CONFIG_HOME/task/plugins ;;
    *) plugins=$home/.config/task/plugins ;;
  esac
fi
`;

export const INSPECT = `want_plugins=\${1:-}
${WHERE}
if command -v sha256sum >/dev/null 2>&1; then sum=sha256sum
elif command -v shasum >/dev/null 2>&1; then sum="shasum -a 256"
else echo "fail neither sha256sum nor shasum is installed"; exit 0
fi
echo "home $home"
echo "os $(uname -s)"
echo "arch $(uname -m)"
echo "deno $(deno --version 2>/dev/null | head -n 1)"
case ":$PATH:" in *":$bin:"*) echo "on_path yes" ;; *) echo "on_path no" ;; esac
echo "found $(command -v tyhooks 2>/dev/null)"
echo "plugins_dir $plugins"
for f in bin/tyhooks share/tyhooks.js share/deno; do
  case $f in bin/*) p=$bin/\${f#bin/} ;; *) p=$share/\${f#share/} ;; esac
  if [ -f "$p" ]; then set -- $($sum < "$p"); echo "hash $1 $f"; fi
done
if [ "$want_plugins" = plugins ] && [ -d "$plugins" ]; then
  cd "$plugins" && find . -type f ! -path "*/.git/*" -exec $sum {} + | sed "s/^/plugin /"
fi
exit 0
`;

/**
 * The command that unpacks the tar stream on the host into a staging dir of its own (syncs of one
 * host under two names do not meet) and runs the apply script in it. Run by the host's login
 * shell, so: one line, no single quote or backslash inside the quotes.
 */
export function unpackCommand(): string {
  const dir = `.incoming-${crypto.randomUUID()}`;
  return `sh -c 's="\${HOME:?}/.local/share/tyhooks/${dir}" && mkdir -p "$s" && cd "$s" && ` +
    `if tar -xf -; then exec sh ./apply.sh; else cd / && rm -rf "$s" && exit 1; fi'`;
}

// Run in the staging dir; the staging dir goes whatever happens.
const APPLY = `set -eu
here=$(pwd)
trap 'cd / && rm -rf "$here"' EXIT
${WHERE}
cd "$here/files"
place() { mkdir -p -- "$(dirname -- "$2")" && mv -f -- "$1" "$2"; }
if [ -d plugins ]; then
  find plugins -type f | while IFS= read -r f; do place "$f" "$plugins/\${f#plugins/}"; done
fi
for f in share/tyhooks.js share/deno; do [ ! -f "$f" ] || place "$f" "$share/\${f#share/}"; done
[ ! -f bin/tyhooks ] || place bin/tyhooks "$bin/tyhooks"
`;

/** What the inspect script found on a host. */
export interface Found {
  home: string;
  os: string;
  arch: string;
  deno: string;
  onPath: boolean;
  found: string;
  pluginsDir: string;
  hashes: Map<string, string>;
}

export function parseInspect(stdout: string): Found | string {
  const found: Found = {
    home: "",
    os: "",
    arch: "",
    deno: "",
    onPath: false,
    found: "",
    pluginsDir: "",
    hashes: new Map(),
  };
  for (const line of stdout.split("\n")) {
    const space = line.indexOf(" ");
    const [key, value] = space < 0 ? [line, ""] : [line.slice(0, space), line.slice(space + 1)];
    if (key === "fail") return value;
    if (key === "home") found.home = value;
    else if (key === "os") found.os = value;
    else if (key === "arch") found.arch = value;
    else if (key === "deno") found.deno = value.match(/^deno (\S+)/)?.[1] ?? "";
    else if (key === "on_path") found.onPath = value === "yes";
    else if (key === "found") found.found = value;
    else if (key === "plugins_dir") found.pluginsDir = value;
    else if (key === "hash") found.hashes.set(value.slice(65), value.slice(0, 64)); // "<sha> <dest>"
    else if (key === "plugin") {
      // sha256sum: "<hex>  ./path" (a name it had to escape starts the line with "\": not ours).
      const match = value.match(/^([0-9a-f]{64}) [ *]\.\/(.*)$/);
      if (match) found.hashes.set(`plugins/${match[2]}`, match[1]);
    }
  }
  return found.home === "" ? "the inspect script printed nothing it could read" : found;
}

/** Lays out the files to send as the host's staging dir will hold them, as symlinks to the sources. */
export async function stage(dir: string, files: PayloadFile[]): Promise<void> {
  await Deno.remove(dir, { recursive: true }).catch(() => {});
  for (const file of files) {
    const path = join(dir, "files", file.dest);
    await Deno.mkdir(join(path, ".."), { recursive: true });
    await Deno.symlink(file.source, path);
  }
  await Deno.writeTextFile(join(dir, "apply.sh"), APPLY);
}
