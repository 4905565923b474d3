// The AI SDK's own Node server, as the baseline of benchmarks/server_load.py.
//
// Usage: node server_bench_node.mjs <deltas>
//
// Serves POST / on an ephemeral loopback port (printed as its URL on stdout): each
// request runs `streamText` over a mock model from `ai/test` that streams <deltas> text
// deltas with no delay, and answers with `toUIMessageStreamResponse()`, whose web
// Response body is written to node:http as it is read (what Next.js and friends do).
// The UI message stream it sends has the same events as the Python side's script:
// start, start-step, text-start, <deltas> text-delta, text-end, finish-step, finish.
import { once } from "node:events";
import http from "node:http";
import { streamText } from "ai";
import { MockLanguageModelV4, convertArrayToReadableStream } from "ai/test";

const deltas = Number(process.argv[2] ?? "1000");

function modelChunks() {
  const chunks = [{ type: "stream-start", warnings: [] }, { type: "text-start", id: "t" }];
  for (let i = 0; i < deltas; i++) chunks.push({ type: "text-delta", id: "t", delta: `word${i % 10} ` });
  chunks.push({ type: "text-end", id: "t" });
  chunks.push({
    type: "finish",
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: deltas, text: deltas, reasoning: undefined },
    },
  });
  return chunks;
}

const server = http.createServer(async (req, res) => {
  // The body is not needed (every request gets the same answer), but it is read to its end.
  req.resume();
  await once(req, "end");
  const model = new MockLanguageModelV4({
    doStream: async () => ({ stream: convertArrayToReadableStream(modelChunks()) }),
  });
  const result = streamText({ model, prompt: "Hello" });
  const response = result.toUIMessageStreamResponse();
  res.writeHead(response.status, Object.fromEntries(response.headers.entries()));
  for await (const chunk of response.body) {
    if (!res.write(chunk)) await once(res, "drain");
  }
  res.end();
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  process.stdout.write(`http://127.0.0.1:${port}\n`);
});
