// A chat endpoint built only from the genuine AI SDK's server helpers, for testing
// ai_chat's UI message stream client adapter against the real thing.
//
//   node tests/js/ui_client_server.mjs      prints {"port": N} once it listens on 127.0.0.1
//
// POST /api/chat takes the body DefaultChatTransport sends; the extra body key
// "scenario" picks the answer. Each request's UI messages are checked with the SDK's
// validateUIMessages (a 400 with the error text if they are invalid) and converted with
// convertToModelMessages; streamText runs over a MockLanguageModelV4 from "ai/test", and
// toUIMessageStream turns its stream into UI message chunks, sent with
// createUIMessageStreamResponse (written to node:http) or pipeUIMessageStreamToResponse.
// GET /stats reports how many answers the client abandoned (the socket closed before the
// body ended), so a test can check that stopping the adapter closed the connection.

import http from 'node:http';
import {
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  jsonSchema,
  pipeUIMessageStreamToResponse,
  stepCountIs,
  streamText,
  tool,
  toUIMessageStream,
  validateUIMessages,
} from 'ai';
import { MockLanguageModelV4, convertArrayToReadableStream } from 'ai/test';

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});
const finish = (unified, input = 5, output = 7) => ({
  type: 'finish',
  finishReason: { unified, raw: unified },
  usage: usage(input, output),
});
const START = [
  { type: 'stream-start', warnings: [] },
  { type: 'response-metadata', id: 'resp-1', modelId: 'mock-model-id', timestamp: new Date(0) },
];
const text = (id, ...deltas) => [
  { type: 'text-start', id },
  ...deltas.map(delta => ({ type: 'text-delta', id, delta })),
  { type: 'text-end', id },
];

function model(...steps) {
  return new MockLanguageModelV4({
    doStream: steps.map(parts => ({ stream: convertArrayToReadableStream(parts) })),
  });
}

// Message metadata on start and finish, as an application would send usage.
const messageMetadata = ({ part }) => {
  if (part.type === 'start') return { model: 'mock-model-id' };
  if (part.type === 'finish') {
    return { usage: { inputTokens: part.totalUsage.inputTokens, outputTokens: part.totalUsage.outputTokens } };
  }
  return undefined;
};

const weather = tool({
  description: 'The weather in a city',
  inputSchema: jsonSchema({
    type: 'object',
    properties: { city: { type: 'string' } },
    required: ['city'],
  }),
  execute: async ({ city }) => ({ city, temperature: 21, unit: 'C' }),
});

let abandoned = 0;

const scenarios = {
  // text only, message metadata on start and finish; createUIMessageStreamResponse
  text: async ({ messages, res }) => {
    const result = streamText({
      model: model([...START, ...text('t1', 'Hello', ', ', 'world'), finish('stop')]),
      messages,
    });
    await sendResponse(res, createUIMessageStreamResponse({
      stream: toUIMessageStream({ stream: result.stream, messageMetadata }),
    }));
  },
  // reasoning then text; pipeUIMessageStreamToResponse
  reasoning: async ({ messages, res }) => {
    const result = streamText({
      model: model([
        ...START,
        { type: 'reasoning-start', id: 'r1' },
        { type: 'reasoning-delta', id: 'r1', delta: 'The user greets; ' },
        { type: 'reasoning-delta', id: 'r1', delta: 'answer briefly.' },
        { type: 'reasoning-end', id: 'r1' },
        ...text('t1', 'Hi!'),
        finish('stop', 3, 4),
      ]),
      messages,
    });
    await pipeUIMessageStreamToResponse({ response: res, stream: toUIMessageStream({ stream: result.stream }) });
  },
  // the application's start and data chunks, then a streamed tool call executed by the
  // server, then a source, text and a file in a second step; createUIMessageStream
  tools: async ({ messages, res }) => {
    const result = streamText({
      model: model(
        [
          ...START,
          { type: 'tool-input-start', id: 'call-1', toolName: 'weather' },
          { type: 'tool-input-delta', id: 'call-1', delta: '{"city":' },
          { type: 'tool-input-delta', id: 'call-1', delta: '"Berlin"}' },
          { type: 'tool-input-end', id: 'call-1' },
          { type: 'tool-call', toolCallId: 'call-1', toolName: 'weather', input: '{"city":"Berlin"}' },
          finish('tool-calls', 10, 5),
        ],
        [
          ...START,
          { type: 'source', sourceType: 'url', id: 'src-1', url: 'https://example.com/berlin', title: 'Berlin weather' },
          ...text('t2', 'It is 21 degrees in Berlin.'),
          { type: 'file', mediaType: 'image/png', data: { type: 'data', data: new Uint8Array([137, 80, 78, 71]) } },
          finish('stop', 20, 8),
        ],
      ),
      messages,
      tools: { weather },
      stopWhen: stepCountIs(2),
    });
    const stream = createUIMessageStream({
      execute: ({ writer }) => {
        // The application's own chunks first, then the model's answer merged in.
        writer.write({ type: 'start', messageId: 'msg-generated' });
        writer.write({ type: 'data-weather', id: 'w1', data: { city: 'Berlin', status: 'loading' } });
        writer.merge(toUIMessageStream({ stream: result.stream, sendStart: false, sendSources: true, messageMetadata }));
      },
    });
    await sendResponse(res, createUIMessageStreamResponse({ stream }));
  },
  // the model's prompt, as the SDK converted our UI messages, returned as the text
  prompt: async ({ messages, res }) => {
    const mock = new MockLanguageModelV4({
      doStream: async ({ prompt }) => ({
        stream: convertArrayToReadableStream([...START, ...text('t1', JSON.stringify(prompt)), finish('stop')]),
      }),
    });
    // ai 7 takes system text as instructions, not as messages.
    const instructions = messages.filter(m => m.role === 'system').map(m => m.content).join('\n');
    const result = streamText({
      model: mock,
      instructions: instructions || undefined,
      messages: messages.filter(m => m.role !== 'system'),
    });
    await sendResponse(res, createUIMessageStreamResponse({
      stream: toUIMessageStream({ stream: result.stream, onError: error => String(error?.message ?? error) }),
    }));
  },
  // the model fails mid-answer; onError formats the error chunk's text
  error: async ({ messages, res }) => {
    const result = streamText({
      model: model([
        ...START,
        { type: 'text-start', id: 't1' },
        { type: 'text-delta', id: 't1', delta: 'Partial' },
        { type: 'error', error: new Error('the model exploded') },
        { type: 'text-end', id: 't1' },
        finish('error'),
      ]),
      messages,
      onError: () => {},
    });
    await sendResponse(res, createUIMessageStreamResponse({
      stream: toUIMessageStream({ stream: result.stream, onError: error => error.message }),
    }));
  },
  // the server aborts its own generation after the first delta
  abort: async ({ messages, res }) => {
    const controller = new AbortController();
    const mock = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream({
          start(stream) {
            for (const part of [...START, { type: 'text-start', id: 't1' }, { type: 'text-delta', id: 't1', delta: 'Partial' }]) {
              stream.enqueue(part);
            }
          },
          pull() {
            controller.abort('the server stopped');
            return new Promise(() => {});
          },
        }),
      }),
    });
    const result = streamText({ model: mock, messages, abortSignal: controller.signal });
    await sendResponse(res, createUIMessageStreamResponse({ stream: toUIMessageStream({ stream: result.stream }) }));
  },
  // the model's stream ended without its completion signal
  interrupted: async ({ messages, res }) => {
    const result = streamText({
      model: model([...START, ...text('t1', 'Cut'), finish('interrupted')]),
      messages,
    });
    await sendResponse(res, createUIMessageStreamResponse({ stream: toUIMessageStream({ stream: result.stream }) }));
  },
  // one delta, then a delta every 50 ms for a minute: for stopping mid-answer
  slow: async ({ messages, res }) => {
    const parts = [...START, { type: 'text-start', id: 't1' }];
    for (let i = 0; i < 1200; i++) parts.push({ type: 'text-delta', id: 't1', delta: `${i} ` });
    parts.push({ type: 'text-end', id: 't1' }, finish('stop'));
    const [first, ...rest] = [parts.slice(0, 3), ...parts.slice(3).map(p => [p])];
    let index = 0;
    const mock = new MockLanguageModelV4({
      doStream: async () => ({
        stream: new ReadableStream({
          async pull(stream) {
            const batch = index === 0 ? first : rest[index - 1];
            if (batch === undefined) return stream.close();
            if (index > 1) await new Promise(resolve => setTimeout(resolve, 50));
            index++;
            for (const part of batch) stream.enqueue(part);
          },
        }),
      }),
    });
    const result = streamText({ model: mock, messages });
    await sendResponse(res, createUIMessageStreamResponse({ stream: toUIMessageStream({ stream: result.stream }) }));
  },
};

async function sendResponse(res, response) {
  res.writeHead(response.status, Object.fromEntries(response.headers));
  const reader = response.body.getReader();
  let ended = false;
  res.on('close', () => {
    if (!ended) {
      abandoned++;
      reader.cancel().catch(() => {});
    }
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      res.write(value);
    }
    ended = true;
    res.end();
  } catch {
    res.destroy();
  }
}

async function readBody(req) {
  const pieces = [];
  for await (const piece of req) pieces.push(piece);
  return JSON.parse(Buffer.concat(pieces).toString('utf8'));
}

const server = http.createServer(async (req, res) => {
  try {
    if (req.method === 'GET' && req.url === '/stats') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ abandoned }));
      return;
    }
    if (req.method !== 'POST' || req.url !== '/api/chat') {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found');
      return;
    }
    const body = await readBody(req);
    let uiMessages;
    try {
      uiMessages = await validateUIMessages({ messages: body.messages });
    } catch (error) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`invalid UI messages: ${error.message}`);
      return;
    }
    const scenario = scenarios[body.scenario];
    if (scenario === undefined) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end(`unknown scenario ${JSON.stringify(body.scenario)}`);
      return;
    }
    const messages = await convertToModelMessages(uiMessages);
    await scenario({ body, uiMessages, messages, res });
  } catch (error) {
    if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
    res.end(String(error && error.stack || error));
  }
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
