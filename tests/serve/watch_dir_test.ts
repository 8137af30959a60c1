import assert from "node:assert/strict";
import { watchDir } from "../../lib/serve/watch_dir.ts";

/** Counts calls; `next()` resolves at the next call, or fails after `ms`. */
function counter() {
  let calls = 0;
  let waiter: (() => void) | undefined;
  return {
    get calls() {
      return calls;
    },
    onChange: () => {
      calls++;
      waiter?.();
    },
    next(ms = 5000): Promise<void> {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`No change seen within ${ms} ms`)), ms);
        waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    },
  };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

Deno.test("watchDir() turns a burst of changes into one call", async () => {
  const dir = await Deno.makeTempDir();
  const seen = counter();
  const watch = watchDir(dir, seen.onChange, { debounceMs: 150 });
  try {
    await sleep(50);
    const next = seen.next();
    for (let i = 0; i < 5; i++) await Deno.writeTextFile(`${dir}/f${i}`, "x");
    await Deno.mkdir(`${dir}/sub/deep`, { recursive: true });
    await next;
    await sleep(300);
    assert.equal(seen.calls, 1);
    // Changes in a subdirectory created after the watch started are seen too.
    const again = seen.next();
    await Deno.writeTextFile(`${dir}/sub/deep/plugin.yaml`, "name: x\n");
    await again;
  } finally {
    watch.close();
  }
});

Deno.test("watchDir() on a missing dir waits for it, then watches it", async () => {
  const parent = await Deno.makeTempDir();
  const dir = `${parent}/plugins`;
  const seen = counter();
  const watch = watchDir(dir, seen.onChange, { debounceMs: 50, pollMs: 50 });
  try {
    await sleep(100);
    assert.equal(seen.calls, 0);
    const appeared = seen.next();
    await Deno.mkdir(dir);
    await appeared;
    await sleep(200);
    const changed = seen.next();
    await Deno.writeTextFile(`${dir}/x`, "1");
    await changed;
  } finally {
    watch.close();
  }
});

Deno.test("watchDir() follows a dir that is removed and created again", async () => {
  const parent = await Deno.makeTempDir();
  const dir = `${parent}/plugins`;
  await Deno.mkdir(dir);
  const seen = counter();
  const watch = watchDir(dir, seen.onChange, { debounceMs: 50, pollMs: 50 });
  try {
    await sleep(50);
    const removed = seen.next();
    await Deno.remove(dir);
    await removed;
    const back = seen.next();
    await Deno.mkdir(dir);
    await back;
    await sleep(200);
    const changed = seen.next();
    await Deno.writeTextFile(`${dir}/x`, "1");
    await changed;
  } finally {
    watch.close();
  }
});

Deno.test("watchDir() makes no call after close()", async () => {
  const dir = await Deno.makeTempDir();
  const seen = counter();
  const watch = watchDir(dir, seen.onChange, { debounceMs: 100 });
  await sleep(50);
  await Deno.writeTextFile(`${dir}/x`, "1");
  watch.close();
  await sleep(300);
  assert.equal(seen.calls, 0);
});
