import assert from "node:assert/strict";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { NEEDS_ROOT, ROOT, tempDir } from "../_cli.ts";
import { waitGone } from "../_procs.ts";
import { Spool, spoolCounts, SpoolFullError, type SpoolWork } from "../../lib/spool/spool.ts";
import { MAX_ENTRY_BYTES } from "../../lib/spool/entry.ts";
import { createLogger } from "../../lib/log.ts";

const work = (what: string, size = 0): SpoolWork => ({
  what,
  args: ["fire", `--task-json={"title":"${"x".repeat(size)}"}`, "--", what],
});

function mode(path: string): number {
  return Deno.lstatSync(path).mode! & 0o777;
}

Deno.test("Spool.add writes a 0600 file into a 0700 dir, and scan finds it in acceptance order", async () => {
  const dir = join(await tempDir({ prefix: "tyh-spool-" }), "spool");
  const spool = Spool.open(dir);
  const names = [];
  for (const what of ["a", "b", "c"]) {
    names.push((await spool.add(work(what), { claim: false })).name);
  }
  assert.equal(mode(dir), 0o700);
  for (const name of names) assert.equal(mode(join(dir, name)), 0o600);
  const found = await Spool.open(dir).scan();
  assert.deepEqual(found.entries.map((e) => e.doc.what), ["a", "b", "c"]);
  assert.deepEqual(found.entries.map((e) => e.name), names);
  // No temp file is left beside them.
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name).sort(), [...names].sort());
});

Deno.test("Spool.add refuses past its entry bound and past its byte bound, and logs the refusal", async () => {
  const lines: string[] = [];
  const log = createLogger({ format: "json", write: (l) => lines.push(l) });
  const dir = await tempDir({ prefix: "tyh-spool-" });
  const spool = Spool.open(dir, { maxEntries: 2, maxBytes: 4000, log });
  await spool.add(work("a"));
  await spool.add(work("b"));
  await assert.rejects(spool.add(work("c")), SpoolFullError);
  assert.deepEqual(spool.depth.entries, 2);
  await spool.close();
  const bytes = Spool.open(dir, { maxEntries: 100, maxBytes: 4000, log });
  await bytes.add(work("d", 2000));
  await assert.rejects(bytes.add(work("e", 2000)), /the spool is full/);
  assert.equal(bytes.refused, 1);
  assert.match(JSON.parse(lines[0]).msg, /Spool full: refused "c"/);
  await bytes.close();
  // One entry too large for any spool is not "the spool is full".
  const roomy = Spool.open(dir, { maxBytes: 64 * 1024 * 1024, log });
  await assert.rejects(
    roomy.add(work("huge", MAX_ENTRY_BYTES)),
    /^RunError: Cannot spool "huge": its \d+ bytes are over the 16777216 bytes one entry may hold$/,
  );
  // Nor is one nested deeper than JSON.stringify can write. (V8 writes plain data on a fast path
  // that does not recurse; a Date in it takes the one that does, as an agent's body in the daemon
  // did for reasons of V8's own.)
  let deep: unknown = [];
  for (let i = 0; i < 200_000; i++) deep = [deep];
  const body = { at: new Date(0), tool_input: deep };
  await assert.rejects(
    roomy.add({
      what: "deep",
      request: { path: "/v1/x", body },
      plugins_dir: dir,
      hooks_dir: null,
    }),
    /^RunError: Cannot spool "deep": it nests too deeply to be written \(Maximum call stack size exceeded\)$/,
  );
  await roomy.close();
});

Deno.test("Spool.open refuses a spool dir that others can write", async () => {
  const dir = await tempDir({ prefix: "tyh-spool-" });
  await Deno.chmod(dir, 0o777);
  assert.throws(
    () => Spool.open(dir),
    /Cannot use the spool: the spool dir .* is writable by group or others/,
  );
});

Deno.test("Spool.open refuses a spool dir in a dir that others can write", async () => {
  const parent = join(await tempDir({ prefix: "tyh-spool-" }), "tyhooks");
  const dir = join(parent, "spool");
  await Deno.mkdir(dir, { recursive: true, mode: 0o700 });
  // Whoever can write the dir above can move the spool dir away and put one of theirs there.
  await Deno.chmod(parent, 0o777);
  assert.throws(
    () => Spool.open(dir),
    /Cannot use the spool: ".*\/tyhooks" is writable by group or others and not sticky \(mode 0777\)/,
  );
});

Deno.test("an entry goes to one runner only: a second claim of it gets null", async () => {
  const dir = await tempDir({ prefix: "tyh-spool-" });
  await Spool.open(dir).add(work("a"), { claim: false });
  const [one, two] = [Spool.open(dir), Spool.open(dir)];
  const [seenByOne, seenByTwo] = [await one.scan(), await two.scan()];
  assert.ok(await one.claim(seenByOne.entries[0]) !== null);
  assert.equal(await two.claim(seenByTwo.entries[0]), null);
  // Held by a live runner: nobody else sees it waiting.
  assert.deepEqual((await Spool.open(dir).scan()).entries, []);
  await one.close();
  await two.close();
});

Deno.test("entries a killed runner held are running while it lives and waiting once it is killed", async () => {
  const dir = await tempDir({ prefix: "tyh-spool-" });
  const module = pathToFileURL(join(ROOT, "lib", "spool", "spool.ts")).href;
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "eval",
      `import { Spool } from ${JSON.stringify(module)};
       const spool = Spool.open(${JSON.stringify(dir)});
       await spool.add({ what: "a", args: [] });
       await spool.add({ what: "b", args: [] });
       console.log("ready");
       await new Promise(() => setInterval(() => {}, 1000));`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  try {
    const reader = child.stdout.getReader();
    assert.match(new TextDecoder().decode((await reader.read()).value), /ready/);
    reader.releaseLock();
    assert.deepEqual(await spoolCounts(dir), { pending: 0, running: 2, set_aside: 0 });
    child.kill("SIGKILL");
    assert.ok(await waitGone(child.pid));
    // The kernel drops a dead process's locks as it closes its files, a moment after it exits.
    const deadline = Date.now() + 5000;
    while ((await spoolCounts(dir)).running > 0 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
    }
    assert.deepEqual(await spoolCounts(dir), { pending: 2, running: 0, set_aside: 0 });
    const spool = Spool.open(dir);
    const found = await spool.scan();
    assert.deepEqual(found.entries.map((e) => e.doc.what), ["a", "b"]);
    for (const entry of found.entries) await spool.finish((await spool.claim(entry))!);
    await spool.close();
    // The dead runner's dir went with its last entry, and this runner's with its close.
    assert.deepEqual([...Deno.readDirSync(dir)], []);
  } finally {
    try {
      child.kill("SIGKILL");
    } catch {
      // Gone already.
    }
    await child.status;
    await child.stdout.cancel().catch(() => {});
  }
});

Deno.test("Spool.close gives held entries back to the spool for the next runner", async () => {
  const dir = await tempDir({ prefix: "tyh-spool-" });
  const spool = Spool.open(dir);
  const entry = await spool.add(work("a"));
  await spool.close();
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), [entry.name]);
  await assert.rejects(spool.add(work("b")), /the spool is closed/);
});

Deno.test("spoolCounts reads a corrupt file as set aside without renaming it; a scan sets it aside", async () => {
  const dir = await tempDir({ prefix: "tyh-spool-" });
  const name = "1700000000000-000001-0000abcd.json";
  await Deno.writeTextFile(join(dir, name), "{", { mode: 0o600 });
  assert.deepEqual(await spoolCounts(dir), { pending: 0, running: 0, set_aside: 1 });
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), [name]);
  const found = await Spool.open(dir).scan();
  assert.deepEqual(found.setAside, [{ name, reason: "corrupt" }]);
  assert.deepEqual([...Deno.readDirSync(dir)].map((e) => e.name), [`${name}.corrupt`]);
  assert.deepEqual(await spoolCounts(dir), { pending: 0, running: 0, set_aside: 1 });
});

Deno.test(
  "a spool file owned by another user is set aside as unsafe, never run",
  NEEDS_ROOT,
  async () => {
    const dir = await tempDir({ prefix: "tyh-spool-" });
    const spool = Spool.open(dir);
    const entry = await spool.add(work("a"), { claim: false });
    await Deno.chown(join(dir, entry.name), 65534, 65534);
    const found = await Spool.open(dir).scan();
    assert.deepEqual(found.entries, []);
    assert.deepEqual(found.setAside, [{ name: entry.name, reason: "unsafe" }]);
    assert.ok(Deno.lstatSync(join(dir, `${entry.name}.unsafe`)).isFile);
  },
);
