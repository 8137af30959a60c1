import assert from "node:assert/strict";
import { join } from "node:path";
import {
  checkRef,
  installFolderName,
  parseInstallSource,
  sameSource,
} from "../../lib/plugins/install/source.ts";
import { InputError } from "../../lib/errors.ts";
import { valueIn, withTree } from "../_cli.ts";

Deno.test("SOURCE forms as ty reads them: URLs, GitHub shorthands, local paths", async () => {
  const cases: [string, unknown][] = [
    ["https://github.com/me/ty-notify.git", {
      kind: "git",
      url: "https://github.com/me/ty-notify.git",
    }],
    ["ssh://git@host:2222/me/x.git", { kind: "git", url: "ssh://git@host:2222/me/x.git" }],
    ["git@github.com:me/x.git", { kind: "git", url: "git@github.com:me/x.git" }],
    ["file:///srv/repos/x", { kind: "git", url: "file:///srv/repos/x" }],
    ["taskyou/plugins", { kind: "git", url: "https://github.com/taskyou/plugins.git" }],
    ["github.com/taskyou/plugins", { kind: "git", url: "https://github.com/taskyou/plugins.git" }],
    ["/srv/x", { kind: "local", path: "/srv/x" }],
    ["./x", { kind: "local", path: join(Deno.cwd(), "x") }],
    ["../x", { kind: "local", path: join(Deno.cwd(), "../x") }],
  ];
  for (const [source, expected] of cases) {
    assert.deepEqual(await parseInstallSource(source), expected, source);
  }
  const home = Deno.env.get("HOME")!;
  assert.deepEqual(await parseInstallSource("~/plugins/x"), {
    kind: "local",
    path: join(home, "plugins/x"),
  });
});

Deno.test("a bare word naming an existing folder is a path, as in ty; owner/repo otherwise", async () => {
  await withTree({}, async (dir) => {
    await Deno.mkdir(join(dir, "me/repo"), { recursive: true });
    // Read against the cwd: a child's, since parallel test modules share this process's.
    const parse = (source: string) =>
      valueIn(
        { parseInstallSource: "lib/plugins/install/source.ts" },
        `parseInstallSource("${source}")`,
        {
          cwd: dir,
        },
      );
    assert.deepEqual(await parse("me/repo"), {
      kind: "local",
      path: join(await Deno.realPath(dir), "me/repo"),
    });
    assert.deepEqual(await parse("me/other"), {
      kind: "git",
      url: "https://github.com/me/other.git",
    });
  });
});

Deno.test("anything else, any other transport, and option-looking parts are refused", async () => {
  for (
    const source of [
      "",
      "ext::sh -c 'touch /tmp/x'",
      "fd::7",
      "http://host/x.git",
      "git://host/x.git",
      "ftp://host/x",
      "--upload-pack=evil",
      "-x",
      "git@-oProxyCommand=evil:x",
      "ssh://-oProxyCommand=evil/x",
      "git@host:-x",
      "word",
      "a/b/c",
      "a b/c",
      "x\ny/z",
    ]
  ) {
    await assert.rejects(() => parseInstallSource(source), InputError, JSON.stringify(source));
  }
  for (const ref of ["", "-b", "--orphan", "a b", "x\ny"]) {
    assert.throws(() => checkRef(ref), InputError, JSON.stringify(ref));
  }
  assert.equal(checkRef("v1.2.0"), "v1.2.0");
});

Deno.test("install folders are named as ty names them", () => {
  const cases: [string, string][] = [
    ["https://github.com/me/ty-notify.git", "ty-notify"],
    ["https://github.com/me/ty-notify/", "ty-notify"],
    ["git@host:me/ty-notify.git", "ty-notify"],
    ["git@host:ty-notify.git", "ty-notify"],
    ["file:///srv/repos/plugins", "plugins"],
  ];
  for (const [url, name] of cases) assert.equal(installFolderName({ kind: "git", url }), name);
  assert.equal(installFolderName({ kind: "local", path: "/home/me/my-plugin" }), "my-plugin");
  assert.ok(sameSource("https://github.com/o/r", "https://github.com/o/r.git"));
  assert.ok(!sameSource("https://github.com/o/r", "https://github.com/o/s"));
});
