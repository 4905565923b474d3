"""Event scripts that exercise every event kind, and what the AI SDK should make of them."""

from __future__ import annotations

from typing import Any

USAGE = {"inputTokens": 12, "outputTokens": 34, "totalTokens": 46, "reasoningTokens": 5}

# Every event kind of the vocabulary, in an order the AI SDK server itself produces:
# two steps, streamed and dynamic and provider-executed tools, preliminary output, data
# parts replaced in place and transient, sources, a file, metadata three ways.
EVERY_EVENT: list[dict[str, Any]] = [
    {"type": "start", "messageId": "msg-every", "messageMetadata": {"model": "scripted"}},
    {"type": "start-step"},
    {"type": "reasoning-start", "id": "r1", "providerMetadata": {"test": {"signature": "sig"}}},
    {"type": "reasoning-delta", "id": "r1", "delta": "Thinking "},
    {"type": "reasoning-delta", "id": "r1", "delta": "hard."},
    {"type": "reasoning-end", "id": "r1"},
    {"type": "text-start", "id": "t1"},
    {"type": "text-delta", "id": "t1", "delta": "Hello, "},
    {"type": "text-delta", "id": "t1", "delta": 'wörld ✓ "quoted"\n\u2028 😀'},
    {"type": "text-end", "id": "t1"},
    {"type": "tool-input-start", "toolCallId": "c1", "toolName": "weather", "title": "Weather"},
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '{"city":'},
    {"type": "tool-input-delta", "toolCallId": "c1", "inputTextDelta": '"Berlin"}'},
    {
        "type": "tool-input-available",
        "toolCallId": "c1",
        "toolName": "weather",
        "input": {"city": "Berlin"},
        "title": "Weather",
    },
    {"type": "data-weather", "id": "w1", "data": {"status": "loading"}},
    {"type": "data-weather", "id": "w1", "data": {"status": "done", "temperature": 21}},
    {"type": "data-progress", "data": 0.5, "transient": True},
    {
        "type": "tool-output-available",
        "toolCallId": "c1",
        "output": {"temperature": 20},
        "preliminary": True,
    },
    {"type": "tool-output-available", "toolCallId": "c1", "output": {"temperature": 21}},
    {
        "type": "tool-input-available",
        "toolCallId": "c2",
        "toolName": "lookup",
        "input": {"q": "x"},
        "dynamic": True,
    },
    {
        "type": "tool-output-error",
        "toolCallId": "c2",
        "errorText": "lookup failed",
        "dynamic": True,
    },
    {
        "type": "tool-input-error",
        "toolCallId": "c3",
        "toolName": "weather",
        "input": "{bad",
        "errorText": "invalid JSON",
    },
    {
        "type": "tool-input-available",
        "toolCallId": "c4",
        "toolName": "web_search",
        "input": {"q": "web"},
        "providerExecuted": True,
    },
    {"type": "tool-output-available", "toolCallId": "c4", "output": None, "providerExecuted": True},
    {"type": "message-metadata", "messageMetadata": {"step": 1}},
    {"type": "finish-step"},
    {"type": "start-step"},
    {"type": "source-url", "sourceId": "s1", "url": "https://example.com/b", "title": "Berlin"},
    {
        "type": "source-document",
        "sourceId": "s2",
        "mediaType": "application/pdf",
        "title": "Report",
        "filename": "report.pdf",
    },
    {"type": "file", "url": "data:image/png;base64,iVBORw0KGgo=", "mediaType": "image/png"},
    {"type": "text-start", "id": "t2"},
    {"type": "text-delta", "id": "t2", "delta": "Done."},
    {"type": "text-end", "id": "t2"},
    {"type": "finish-step"},
    {
        "type": "finish",
        "finishReason": "stop",
        "usage": USAGE,
        "messageMetadata": {"model": "scripted-2"},
    },
]

# EVERY_EVENT as our server sends it: the same chunks, except finish (usage and the
# finish reason move into its messageMetadata).
EVERY_CHUNK: list[dict[str, Any]] = [
    *EVERY_EVENT[:-1],
    {
        "type": "finish",
        "finishReason": "stop",
        "messageMetadata": {"finishReason": "stop", "usage": USAGE, "model": "scripted-2"},
    },
]
