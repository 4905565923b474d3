// The genuine AI SDK client (npm `ai`, pinned in package.json) against ai_chat's server.
//
// Usage: node server_client_check.mjs <base-url>
//
// The server (started by tests/server/test_js_client.py) serves several chat endpoints
// under <base-url>, each with its own scripted adapter. For each scenario this prints
// what the SDK made of the answer, as one JSON object on stdout; the Python test holds
// the expectations. Per scenario:
//   - `chunks`: every SSE event parsed by the SDK's own parser and validated with
//     `uiMessageChunkSchema` (`failures` lists any chunk that did not validate);
//   - `message`: the assistant UIMessage `readUIMessageStream` assembled from them;
//   - `chat`: what `AbstractChat` + `DefaultChatTransport` (the class behind useChat)
//     ended with: status, error, messages, and the onFinish flags.
// Every request is sent as the browser sends it from a page of the server's own origin
// (`sameOriginFetch`): with `Sec-Fetch-Site: same-origin`, an `Origin` on a POST, and
// the cookies the server set, so that the server's cross-site checks and visitor
// cookies are in force, as for a real page.
import {
  AbstractChat,
  DefaultChatTransport,
  parseJsonEventStream,
  readUIMessageStream,
  safeValidateUIMessages,
  uiMessageChunkSchema,
} from "ai";

const base = process.argv[2];
if (!base) {
  console.error("usage: node server_client_check.mjs <base-url>");
  process.exit(2);
}

// A browser's cookie jar for the one origin of these requests (cookie names are unique
// here: every cookie is set with Path=/).
const cookies = new Map();

// fetch as a browser sends it from a page served by `base` (Node's fetch has no page, so
// it sends neither Origin nor Sec-Fetch-Site, and keeps no cookies, by itself).
async function sameOriginFetch(input, init = {}) {
  const url = new URL(input instanceof Request ? input.url : String(input));
  const method = (init.method || "GET").toUpperCase();
  const headers = new Headers(init.headers);
  headers.set("sec-fetch-site", "same-origin");
  if (method !== "GET" && method !== "HEAD") headers.set("origin", url.origin);
  if (cookies.size) {
    headers.set("cookie", Array.from(cookies, ([name, value]) => `${name}=${value}`).join("; "));
  }
  const response = await fetch(url, { ...init, headers });
  for (const line of response.headers.getSetCookie()) {
    const pair = line.split(";", 1)[0];
    const equals = pair.indexOf("=");
    cookies.set(pair.slice(0, equals).trim(), pair.slice(equals + 1).trim());
  }
  return response;
}

// A ChatState as framework bindings implement it, over plain arrays.
class State {
  constructor(messages = []) {
    this.status = "ready";
    this.error = undefined;
    this.messages = messages;
  }
  pushMessage = (message) => {
    this.messages = this.messages.concat(message);
  };
  popMessage = () => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index, message) => {
    this.messages = [
      ...this.messages.slice(0, index),
      this.snapshot(message),
      ...this.messages.slice(index + 1),
    ];
  };
  snapshot = (value) => structuredClone(value);
}

class Chat extends AbstractChat {
  constructor({ messages, ...init }) {
    super({ ...init, state: new State(messages) });
  }
}

function newChat(path, messages = [], id = "chat-1") {
  const finishes = [];
  const errors = [];
  const chat = new Chat({
    id,
    messages,
    transport: new DefaultChatTransport({ api: base + path, fetch: sameOriginFetch }),
    onFinish: ({ isAbort, isDisconnect, isError, finishReason }) =>
      finishes.push({ isAbort, isDisconnect, isError, finishReason: finishReason ?? null }),
    onError: (error) => errors.push(error.message),
  });
  return { chat, finishes, errors };
}

function outcome({ chat, finishes, errors }) {
  return {
    status: chat.status,
    error: chat.error ? chat.error.message : null,
    messages: chat.messages,
    finishes,
    errors,
  };
}

// The raw route: fetch, the SDK's SSE parser and schema, then readUIMessageStream.
async function raw(path, body) {
  const response = await sameOriginFetch(base + path, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const headers = Object.fromEntries(response.headers.entries());
  const parsed = parseJsonEventStream({ stream: response.body, schema: uiMessageChunkSchema });
  const chunks = [];
  const failures = [];
  for await (const result of parsed) {
    if (result.success) chunks.push(result.value);
    else failures.push({ raw: result.rawValue ?? null, error: String(result.error) });
  }
  const streamErrors = [];
  let message = null;
  const source = new ReadableStream({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(structuredClone(chunk));
      controller.close();
    },
  });
  for await (const snapshot of readUIMessageStream({
    stream: source,
    onError: (error) => streamErrors.push(String(error)),
  })) {
    message = snapshot;
  }
  return { status: response.status, headers, chunks, failures, message, streamErrors };
}

const hello = {
  id: "chat-1",
  messages: [{ id: "u1", role: "user", parts: [{ type: "text", text: "Hello" }] }],
  trigger: "submit-message",
};

const results = {};

// Every event kind.
results.every = await raw("/every", hello);
{
  const run = newChat("/every");
  await run.chat.sendMessage({ text: "Hello" });
  results.everyChat = outcome(run);
}

// The default offline answer, then regenerate it.
{
  const run = newChat("/default");
  await run.chat.sendMessage({ text: "Hello" });
  results.defaultChat = outcome(run);
  await run.chat.regenerate();
  results.regenerated = outcome(run);
}

// A failure after the headers: masked, and the chat ends in error.
results.failing = await raw("/failing", hello);
{
  const run = newChat("/failing");
  await run.chat.sendMessage({ text: "Hello" });
  results.failingChat = outcome(run);
}

// Continuing an assistant message after a client-side tool result.
{
  const run = newChat("/continue", [
    hello.messages[0],
    {
      id: "a1",
      role: "assistant",
      parts: [
        { type: "step-start" },
        {
          type: "tool-weather",
          toolCallId: "c1",
          state: "output-available",
          input: { city: "Berlin" },
          output: { temperature: 21 },
        },
      ],
    },
  ]);
  await run.chat.sendMessage();
  results.continued = outcome(run);
}

// A bad request: the client shows the JSON error body.
{
  const run = newChat("/every", [
    { id: "u0", role: "user", parts: [{ type: "no-such-part" }] },
  ]);
  await run.chat.sendMessage({ text: "Hello" });
  results.badRequest = outcome(run);
}

// A server that keeps conversations: a chat, then its restored messages (GET) validated
// with the SDK's own schema and used as the history of a new Chat that continues it.
{
  const run = newChat("/stored/api/chat", [], "stored-1");
  await run.chat.sendMessage({ text: "Hello" });
  results.storedChat = outcome(run);
  const listed = await (await sameOriginFetch(base + "/stored/api/chats")).json();
  const restored = await (await sameOriginFetch(base + "/stored/api/chats/stored-1")).json();
  const validation = await safeValidateUIMessages({ messages: restored.messages });
  const again = newChat("/stored/api/chat", restored.messages, "stored-1");
  await again.chat.sendMessage({ text: "Again" });
  results.restored = {
    listed,
    messages: restored.messages,
    valid: validation.success,
    validationError: validation.success ? null : String(validation.error),
    continued: outcome(again),
  };
  // A user edits the first message and sends it again (sendMessage with its messageId):
  // refused until the store has branches, and the stored conversation stays as it was.
  const before = await (await sameOriginFetch(base + "/stored/api/chats/stored-1")).json();
  const edit = newChat("/stored/api/chat", before.messages, "stored-1");
  await edit.chat.sendMessage({ text: "Hello, edited", messageId: before.messages[0].id });
  const after = await (await sameOriginFetch(base + "/stored/api/chats/stored-1")).json();
  results.edited = { chat: outcome(edit), before: before.messages, after: after.messages };
}

process.stdout.write(JSON.stringify(results));
