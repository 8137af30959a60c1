/**
 * `deno task agent-clients` (.ci/agent_clients.ts): where it puts the clients the real-client tests
 * drive, that it reuses them, and that it says why when it cannot install them.
 */

import assert from "node:assert/strict";
import { join } from "node:path";
import { AGENT_CLIENTS, clientBin, clientsCache } from "../../.ci/agent_clients.ts";
import { exec, ROOT, tempDir } from "../_cli.ts";

Deno.test("the clients' cache is $TYHOOKS_AGENT_CLIENTS, else under $XDG_CACHE_HOME, else ~/.cache", () => {
  const from = (env: Record<string, string>) => clientsCache((name) => env[name]);
  assert.equal(from({ HOME: "/h" }), "/h/.cache/tyhooks-agent-clients");
  assert.equal(from({ HOME: "/h", XDG_CACHE_HOME: "/c" }), "/c/tyhooks-agent-clients");
  assert.equal(
    from({ HOME: "/h", XDG_CACHE_HOME: "/c", TYHOOKS_AGENT_CLIENTS: "/clients" }),
    "/clients",
  );
});

/** A registry URL nothing listens on. */
function closedRegistry(): string {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const { port } = listener.addr as Deno.NetAddr;
  listener.close();
  return `http://127.0.0.1:${port}/`;
}

/** `deno task agent-clients` as deno.json has it, with its cache in `cache`, using `registry`. */
async function agentClientsTask(cache: string, registry = closedRegistry()) {
  const config = JSON.parse(await Deno.readTextFile(join(ROOT, "deno.json")));
  const [deno, ...args] = (config.tasks["agent-clients"].command as string).split(" ");
  assert.equal(deno, "deno");
  return await exec([Deno.execPath(), ...args], {
    cwd: ROOT,
    env: {
      NO_COLOR: "1",
      TYHOOKS_AGENT_CLIENTS: cache,
      npm_config_registry: registry,
      // npm's cache and logs, which would go to ~/.npm.
      npm_config_cache: await tempDir(),
    },
  });
}

Deno.test("deno task agent-clients reuses the clients already in its cache, asking no registry", async () => {
  const cache = await tempDir();
  for (const client of Object.values(AGENT_CLIENTS)) {
    const bin = join(cache, `${client.package}@${client.version}`, "node_modules", ".bin");
    await Deno.mkdir(bin, { recursive: true });
    await Deno.writeTextFile(join(bin, client.bin), "#!/bin/sh\n");
  }
  const r = await agentClientsTask(cache);
  assert.equal(r.code, 0, r.stderr);
  const reused = r.stderr.split("\n").filter((line) => line.includes(": reused "));
  assert.equal(reused.length, 3, r.stderr);
  assert.equal(
    clientBin("codex", cache),
    join(cache, "@openai/codex@0.171.0/node_modules/.bin/codex"),
  );
});

const npmMissing = (() => {
  try {
    new Deno.Command("npm", { args: ["--version"], stdout: "null", stderr: "null" }).outputSync();
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
})();

Deno.test({
  name: npmMissing === undefined
    ? "deno task agent-clients says in one line that the registry cannot be reached, and installs nothing"
    : `deno task agent-clients without a registry (skipped: npm cannot be run: ${npmMissing})`,
  ignore: npmMissing !== undefined,
  fn: async () => {
    const cache = await tempDir();
    const r = await agentClientsTask(cache);
    assert.equal(r.code, 1);
    assert.match(
      r.stderr,
      /^deno task agent-clients: Cannot install the agent clients: the npm registry "http:\/\/127\.0\.0\.1:\d+\/" cannot be reached \([^\n]+\)\n$/,
    );
    assert.deepEqual([...Deno.readDirSync(cache)], []);
    assert.equal(clientBin("claude", cache), undefined);
  },
});

Deno.test({
  name: npmMissing === undefined
    ? "deno task agent-clients names the client npm could not install, and leaves no partial install"
    : `deno task agent-clients with a failing install (skipped: npm cannot be run: ${npmMissing})`,
  ignore: npmMissing !== undefined,
  fn: async () => {
    // A registry that answers its ping and knows no package.
    const registry = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen() {} },
      (request) =>
        new URL(request.url).pathname === "/-/ping"
          ? Response.json({})
          : Response.json({ error: "Not found" }, { status: 404 }),
    );
    try {
      const cache = await tempDir();
      const r = await agentClientsTask(cache, `http://127.0.0.1:${registry.addr.port}/`);
      assert.equal(r.code, 1);
      for (const client of Object.values(AGENT_CLIENTS)) {
        const spec = `${client.package}@${client.version}`.replaceAll(".", "\\.");
        assert.match(
          r.stderr,
          new RegExp(
            `^deno task agent-clients: Cannot install "${spec}": npm install failed:\n`,
            "m",
          ),
        );
      }
      const left = [...Deno.readDirSync(cache)].flatMap((scope) =>
        [...Deno.readDirSync(join(cache, scope.name))].map((e) => e.name)
      );
      assert.deepEqual(left, []);
    } finally {
      await registry.shutdown();
    }
  },
});
