/**
 * A scripted model server on 127.0.0.1 for driving real coding-agent clients offline. One port
 * speaks the three wire formats the clients use:
 * - Anthropic Messages (`POST /v1/messages`, SSE or JSON, and `count_tokens`): Claude Code;
 * - Gemini (`POST /v1beta/models/M:streamGenerateContent?alt=sse`, `:generateContent`,
 *   `:countTokens`): Gemini CLI;
 * - OpenAI Responses (`POST /v1/responses`, SSE): Codex.
 *
 * The script is a list of turns. The turn answered is the number of tool results already in the
 * conversation, so retries and side requests never advance it; past the end the model says "done".
 * Requests that offer no shell tool (titles, Gemini's router and compressor) get "ok", or the
 * smallest JSON their schema accepts.
 */

/** One model answer: run a shell command, or say something and stop. */
export type Turn = { shell: string } | { text: string };

/** A request as the server got it. */
export interface ModelRequest {
  /** Path and query. */
  path: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** A running server. */
export interface ModelServer {
  url: string;
  /** Every request, in arrival order. */
  requests: ModelRequest[];
  close(): Promise<void>;
}

// deno-lint-ignore no-explicit-any
type Json = any;

/** Options of {@linkcode startModelServer}. */
export interface ModelServerOptions {
  /**
   * Awaited before a request of the conversation (one that offers the shell tool) is answered,
   * with the number of tool results it holds: the turn about to be played.
   */
  onTurn?: (turn: number) => Promise<void>;
}

/** Starts a server playing `turns` on a free port of 127.0.0.1. */
export function startModelServer(turns: Turn[], options: ModelServerOptions = {}): ModelServer {
  const requests: ModelRequest[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
    const url = new URL(req.url);
    const text = req.method === "POST" ? await req.text() : "";
    let body: Json = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: kept as text.
    }
    requests.push({ path: url.pathname + url.search, body });
    const turn = conversationTurn(body);
    if (turn !== undefined) await options.onTurn?.(turn);
    return answer(url.pathname, body, turns);
  });
  const { port } = server.addr as Deno.NetAddr;
  return { url: `http://127.0.0.1:${port}`, requests, close: () => server.shutdown() };
}

function answer(path: string, body: Json, turns: Turn[]): Response {
  if (path.endsWith("/count_tokens")) return Response.json({ input_tokens: 42 });
  if (path.endsWith(":countTokens")) return Response.json({ totalTokens: 42 });
  if (path.endsWith("/messages")) return anthropic(body, turns);
  if (path.includes(":streamGenerateContent")) return gemini(body, turns, true);
  if (path.endsWith(":generateContent")) return gemini(body, turns, false);
  if (path.endsWith("/responses")) return responses(body, turns);
  if (path.endsWith("/models")) return Response.json({ data: [], models: [] });
  return new Response("not scripted", { status: 404 });
}

function turnAfter(turns: Turn[], toolResults: number): Turn {
  return turns[toolResults] ?? { text: "done" };
}

/**
 * The number of tool results a request of the conversation holds, in any of the three formats;
 * undefined for a side request (one that offers no shell tool).
 */
function conversationTurn(body: Json): number | undefined {
  const anthropic = (body?.tools ?? []).some((t: Json) => t.name === "Bash");
  const gemini = (body?.tools ?? []).flatMap((t: Json) => t.functionDeclarations ?? [])
    .some((f: Json) => f.name === "run_shell_command");
  const openai = Array.isArray(body?.input) && (body?.tools ?? []).length > 0;
  if (!anthropic && !gemini && !openai) return undefined;
  return toolResultCount(body);
}

function toolResultCount(body: Json): number {
  const anthropic =
    (body?.messages ?? []).flatMap((m: Json) => Array.isArray(m.content) ? m.content : []).filter((
      c: Json,
    ) => c.type === "tool_result").length;
  const gemini = (body?.contents ?? []).flatMap((c: Json) => c.parts ?? [])
    .filter((p: Json) => p.functionResponse).length;
  const openai = (Array.isArray(body?.input) ? body.input : [])
    .filter((i: Json) => String(i.type).endsWith("_call_output")).length;
  return anthropic + gemini + openai;
}

function sse(events: string[]): Response {
  return new Response(events.join(""), { headers: { "content-type": "text/event-stream" } });
}

/** A server-sent event whose data carries its type, as Anthropic's and OpenAI's streams do. */
function typedEvent(type: string, data: Json): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

let sequence = 0;
function newId(prefix: string): string {
  return `${prefix}_${(sequence++).toString(36)}`;
}

function anthropic(body: Json, turns: Turn[]): Response {
  const offersShell = (body?.tools ?? []).some((t: Json) => t.name === "Bash");
  const turn = offersShell ? turnAfter(turns, toolResultCount(body)) : { text: "ok" };
  const block = "shell" in turn
    ? {
      type: "tool_use",
      id: newId("toolu"),
      name: "Bash",
      input: { command: turn.shell, description: "Run it" },
    }
    : { type: "text", text: turn.text };
  const stop = "shell" in turn ? "tool_use" : "end_turn";
  const message = {
    id: newId("msg"),
    type: "message",
    role: "assistant",
    model: body?.model ?? "scripted",
    content: [] as Json[],
    stop_reason: null as string | null,
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 1 },
  };
  if (!body?.stream) return Response.json({ ...message, content: [block], stop_reason: stop });
  const start = "input" in block ? { ...block, input: {} } : { type: "text", text: "" };
  const delta = "input" in block
    ? { type: "input_json_delta", partial_json: JSON.stringify(block.input) }
    : { type: "text_delta", text: block.text };
  return sse([
    typedEvent("message_start", { message }),
    typedEvent("content_block_start", { index: 0, content_block: start }),
    typedEvent("content_block_delta", { index: 0, delta }),
    typedEvent("content_block_stop", { index: 0 }),
    typedEvent("message_delta", {
      delta: { stop_reason: stop, stop_sequence: null },
      usage: { output_tokens: 5 },
    }),
    typedEvent("message_stop", {}),
  ]);
}

function gemini(body: Json, turns: Turn[], stream: boolean): Response {
  const offersShell = (body?.tools ?? []).flatMap((t: Json) => t.functionDeclarations ?? [])
    .some((f: Json) => f.name === "run_shell_command");
  let part: Json;
  if (offersShell) {
    const turn = turnAfter(turns, toolResultCount(body));
    part = "shell" in turn
      ? {
        functionCall: {
          name: "run_shell_command",
          args: { command: turn.shell, description: "Run it" },
        },
      }
      : { text: turn.text };
  } else {
    const config = body?.generationConfig;
    const schema = config?.responseJsonSchema ?? config?.responseSchema;
    part = { text: schema ? JSON.stringify(fromSchema(schema)) : "ok" };
  }
  const chunk = {
    candidates: [{ content: { role: "model", parts: [part] }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: "scripted",
  };
  return stream ? sse([`data: ${JSON.stringify(chunk)}\r\n\r\n`]) : Response.json(chunk);
}

/**
 * The smallest value a side question's JSON schema accepts. Gemini's router needs a
 * `complexity_score` of at least 1 (hence the minimum), and "user" wins a next-speaker choice.
 */
function fromSchema(schema: Json): Json {
  const type = String(schema?.type ?? "object").toLowerCase();
  if (schema?.enum) return schema.enum.includes("user") ? "user" : schema.enum[0];
  if (type === "object") {
    const properties = Object.entries(schema.properties ?? {});
    return Object.fromEntries(properties.map(([key, value]) => [key, fromSchema(value)]));
  }
  if (type === "array") return [];
  if (type === "boolean") return false;
  if (type === "number" || type === "integer") return schema.minimum ?? 1;
  return "ok";
}

function responses(body: Json, turns: Turn[]): Response {
  const tools: string[] = (body?.tools ?? []).map((t: Json) => t.name ?? t.type);
  const turn = tools.length > 0 ? turnAfter(turns, toolResultCount(body)) : { text: "ok" };
  let item: Json;
  if ("shell" in turn) {
    // The model's shell tool decides the argument's name.
    const [name, args] = tools.includes("exec_command")
      ? ["exec_command", { cmd: turn.shell }]
      : ["shell_command", { command: turn.shell }];
    item = {
      type: "function_call",
      id: newId("fc"),
      call_id: newId("call"),
      name,
      arguments: JSON.stringify(args),
      status: "completed",
    };
  } else {
    item = {
      type: "message",
      id: newId("msg"),
      role: "assistant",
      status: "completed",
      content: [{ type: "output_text", text: turn.text, annotations: [] }],
    };
  }
  const response = {
    id: newId("resp"),
    object: "response",
    status: "in_progress",
    model: body?.model ?? "scripted",
    output: [] as Json[],
  };
  const usage = {
    input_tokens: 10,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: 5,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: 15,
  };
  return sse([
    typedEvent("response.created", { response }),
    typedEvent("response.output_item.added", { output_index: 0, item }),
    typedEvent("response.output_item.done", { output_index: 0, item }),
    typedEvent("response.completed", {
      response: { ...response, status: "completed", output: [item], usage },
    }),
  ]);
}

/**
 * What the model was told of its tool calls: the text of each tool result in the request that
 * carries the most of them (the conversation's last), in any of the three formats.
 */
export function toolResults(requests: ModelRequest[]): string[] {
  let best: string[] = [];
  for (const { body } of requests) {
    const found = [
      ...(body?.messages ?? []).flatMap((m: Json) => Array.isArray(m.content) ? m.content : [])
        .filter((c: Json) => c.type === "tool_result").map((c: Json) => blockText(c.content)),
      ...(body?.contents ?? []).flatMap((c: Json) => c.parts ?? [])
        .filter((p: Json) => p.functionResponse).map((p: Json) => {
          const response = p.functionResponse.response ?? {};
          return typeof response.error === "string"
            ? response.error
            : typeof response.output === "string"
            ? response.output
            : JSON.stringify(response);
        }),
      ...(body?.input ?? []).filter((i: Json) => String(i.type).endsWith("_call_output"))
        .map((i: Json) => blockText(i.output)),
    ];
    if (found.length > best.length) best = found;
  }
  return best;
}

/** A string, or the text of a list of content blocks. */
function blockText(content: Json): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((b: Json) => b.text ?? "").join("");
  return JSON.stringify(content);
}
