import assert from "node:assert/strict";
import {
  DEFAULT_TIMEOUTS,
  EVENTS,
  eventSpec,
  KNOWN_EVENTS,
  mayBePersistent,
  statusEvent,
  TASK_EVENTS,
  TOOL_EVENTS,
} from "../lib/events.ts";

Deno.test("each event's hooks run under the timeout SPEC gives it, any other name under the event timeout", () => {
  const timeoutOf = (name: string) => DEFAULT_TIMEOUTS[eventSpec(name).timeout];
  assert.deepEqual(Object.fromEntries(KNOWN_EVENTS.map((name) => [name, timeoutOf(name)])), {
    "task.started": 30_000,
    "task.done": 30_000,
    "task.blocked": 30_000,
    "task.failed": 30_000,
    "task.auth_required": 30_000,
    "task.route": 15_000,
    "task.placement": 5_000,
    "task.hosts": 5_000,
    "pre_tool_call": 30_000,
    "post_tool_call": 30_000,
    "agent.prompt": 30_000,
    "agent.stop": 30_000,
    "agent.session_start": 30_000,
    "agent.session_end": 30_000,
    "agent.notification": 30_000,
    "agent.compact": 30_000,
  });
  for (const name of ["deploy.finished", "toString", "constructor", ""]) {
    assert.equal(timeoutOf(name), 30_000, name);
    assert.equal(eventSpec(name).kind, "notified", name);
  }
});

Deno.test("the consulted events are route, placement, hosts, pre_tool_call and an agent's prompt and stop; the rest are notified", () => {
  const consulted = EVENTS.filter((e) => e.kind === "consulted").map((e) => e.name);
  assert.deepEqual(consulted, [
    "task.route",
    "task.placement",
    "task.hosts",
    "pre_tool_call",
    "agent.prompt",
    "agent.stop",
  ]);
  assert.deepEqual(TASK_EVENTS, [
    "task.started",
    "task.done",
    "task.blocked",
    "task.failed",
    "task.auth_required",
  ]);
  assert.deepEqual(TOOL_EVENTS, ["pre_tool_call", "post_tool_call"]);
});

Deno.test("every event's hooks may be persistent but task.route's, whose answer is KEY=VALUE lines", () => {
  const not = [...KNOWN_EVENTS, "deploy.finished"].filter((name) => !mayBePersistent(name));
  assert.deepEqual(not, ["task.route"]);
});

Deno.test("statusEvent() maps statuses exactly as ty does", () => {
  assert.equal(statusEvent("queued"), "task.started");
  assert.equal(statusEvent("processing"), "task.started");
  assert.equal(statusEvent("done"), "task.done");
  assert.equal(statusEvent("blocked", "needs review"), "task.blocked");
  assert.equal(statusEvent("blocked", "Build FAILED"), "task.failed");
  assert.equal(statusEvent("blocked", "an Error occurred"), "task.failed");
  assert.equal(statusEvent("backlog", "error"), null);
  assert.equal(statusEvent("Done"), null);
  assert.equal(statusEvent("toString"), null);
});

/** The `.ts` files below `dir`, as paths relative to it. */
async function tsFiles(dir: URL, prefix = ""): Promise<string[]> {
  const files: string[] = [];
  for await (const entry of Deno.readDir(dir)) {
    const name = `${prefix}${entry.name}`;
    if (entry.isDirectory) files.push(...await tsFiles(new URL(`${entry.name}/`, dir), `${name}/`));
    else if (entry.name.endsWith(".ts")) files.push(name);
  }
  return files;
}

Deno.test("an event's name is written as a literal in lib/events.ts and in at most one other file of lib/", async () => {
  const lib = new URL("../lib/", import.meta.url);
  const code = new Map<string, string>();
  for (const file of await tsFiles(lib)) {
    const text = await Deno.readTextFile(new URL(file, lib));
    // Comments may name events (docs, examples): only code counts.
    const lines = text.split("\n").filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line));
    code.set(file, lines.join("\n"));
  }
  assert.ok(code.has("events.ts") && code.has("hooks/runner.ts"), [...code.keys()].join(" "));
  for (const name of KNOWN_EVENTS) {
    const literal = new RegExp(`["'\`]${name.replaceAll(".", "\\.")}["'\`]`);
    const files = [...code].filter(([, text]) => literal.test(text)).map(([file]) => file);
    assert.ok(files.includes("events.ts"), name);
    const others = files.filter((file) => file !== "events.ts");
    assert.ok(others.length <= 1, `"${name}" is written in ${others.join(", ")}`);
  }
});
