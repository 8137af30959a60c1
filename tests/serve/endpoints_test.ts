import assert from "node:assert/strict";
import { ENDPOINTS, matchEndpoint } from "../../lib/serve/endpoints.ts";
import { HttpError } from "../../lib/serve/http.ts";

Deno.test("matchEndpoint() finds every endpoint SPEC lists", () => {
  assert.deepEqual(ENDPOINTS.map((e) => `${e.method} ${e.path}`), [
    "GET /v1/health",
    "GET /v1/plugins",
    "POST /v1/route",
    "POST /v1/placement",
    "POST /v1/events/:event",
    "POST /v1/status-change",
    "POST /v1/actions/:plugin/:action",
    "POST /v1/tool/pre",
    "POST /v1/tool/post",
    "POST /v1/agent/:agent",
    "POST /v1/hosts",
    "GET /v1/services",
  ]);
});

Deno.test("matchEndpoint() decodes path parameters", () => {
  assert.deepEqual(matchEndpoint("POST", "/v1/events/task%2Edone").params, { event: "task.done" });
  assert.deepEqual(matchEndpoint("POST", "/v1/actions/my%20plugin/sync").params, {
    plugin: "my plugin",
    action: "sync",
  });
});

Deno.test("matchEndpoint() answers 404 for unknown paths, empty or undecodable parameters", () => {
  for (const path of ["/", "/v1", "/v1/health/", "/v2/health", "/v1/events/", "/v1/events/%E0"]) {
    assert.throws(() => matchEndpoint("POST", path), (e: Error) => {
      assert.ok(e instanceof HttpError);
      assert.equal(e.status, 404, path);
      return true;
    });
  }
});

Deno.test("matchEndpoint() answers 405 with Allow for a known path and the wrong method", () => {
  assert.throws(() => matchEndpoint("PUT", "/v1/events/task.done"), (e: Error) => {
    assert.ok(e instanceof HttpError);
    assert.equal(e.status, 405);
    assert.deepEqual(e.headers, { allow: "POST" });
    return true;
  });
});
