"""Static types for normalized messages, requests and events.

They are read-only ``TypedDict`` s over the frozen mappings the JSON boundary returns: at
run time a message or an event *is* a :class:`~ai_chat.limits.FrozenDict`, so it goes to
``json.dumps`` or onto the wire as it is, keeps unknown properties, and works with
``match`` mapping patterns; to pyright it is a typed record whose fields cannot be
assigned. Field names are the AI SDK's (camelCase) so the same JSON travels unchanged
between a browser, a server and the adapters.
"""

from __future__ import annotations

import sys
from typing import Literal, TypeAlias

if sys.version_info >= (3, 13):
    from typing import NotRequired, ReadOnly, TypedDict
else:
    from typing import NotRequired

    from typing_extensions import ReadOnly, TypedDict

from .limits import JSONObject, JSONValue

__all__ = [
    "ChatEvent",
    "ChatRequest",
    "DataEvent",
    "DataPart",
    "FileEvent",
    "FilePart",
    "FinishEvent",
    "FinishReason",
    "FinishStepEvent",
    "Message",
    "MessageMetadataEvent",
    "Part",
    "ReasoningDeltaEvent",
    "ReasoningEndEvent",
    "ReasoningPart",
    "ReasoningStartEvent",
    "Role",
    "SourceDocumentEvent",
    "SourceUrlEvent",
    "StartEvent",
    "StartStepEvent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextPart",
    "TextStartEvent",
    "ToolCallPart",
    "ToolDefinition",
    "ToolInputAvailableEvent",
    "ToolInputDeltaEvent",
    "ToolInputErrorEvent",
    "ToolInputStartEvent",
    "ToolOutputAvailableEvent",
    "ToolOutputErrorEvent",
    "ToolResultPart",
    "Usage",
]

Role: TypeAlias = Literal["system", "user", "assistant", "tool"]
FinishReason: TypeAlias = Literal[
    "stop", "length", "content-filter", "tool-calls", "error", "other"
]


# --- Message parts ---------------------------------------------------------------------


class TextPart(TypedDict):
    type: ReadOnly[Literal["text"]]
    text: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ReasoningPart(TypedDict):
    """Model reasoning, handed back to providers that need it (assistant messages only)."""

    type: ReadOnly[Literal["reasoning"]]
    text: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class FilePart(TypedDict):
    """A file by URL or ``data:`` URL. Not checked as a safe navigation target."""

    type: ReadOnly[Literal["file"]]
    mediaType: ReadOnly[str]
    url: ReadOnly[str]
    filename: NotRequired[ReadOnly[str]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ToolCallPart(TypedDict):
    type: ReadOnly[Literal["tool-call"]]
    toolCallId: ReadOnly[str]
    toolName: ReadOnly[str]
    input: ReadOnly[JSONValue]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ToolResultPart(TypedDict):
    type: ReadOnly[Literal["tool-result"]]
    toolCallId: ReadOnly[str]
    toolName: ReadOnly[str]
    output: ReadOnly[JSONValue]
    isError: NotRequired[ReadOnly[bool]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class DataPart(TypedDict):
    """Application data; ``type`` is ``data-<name>``."""

    type: ReadOnly[str]
    data: ReadOnly[JSONValue]
    id: NotRequired[ReadOnly[str]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


Part: TypeAlias = TextPart | ReasoningPart | FilePart | ToolCallPart | ToolResultPart | DataPart


class Message(TypedDict):
    """A normalized chat message.

    Which parts each role may hold: ``system`` text; ``user`` text, file, data;
    ``assistant`` text, reasoning, file, tool-call, data; ``tool`` tool-result.
    """

    id: ReadOnly[str]
    role: ReadOnly[Role]
    parts: ReadOnly[tuple[Part, ...]]
    metadata: NotRequired[ReadOnly[JSONObject]]


# --- Request ---------------------------------------------------------------------------


class ToolDefinition(TypedDict):
    name: ReadOnly[str]
    inputSchema: ReadOnly[JSONObject]
    description: NotRequired[ReadOnly[str]]


class ChatRequest(TypedDict):
    """The frozen snapshot an adapter receives. ``tools`` and ``parameters`` are always present."""

    messages: ReadOnly[tuple[Message, ...]]
    tools: ReadOnly[tuple[ToolDefinition, ...]]
    parameters: ReadOnly[JSONObject]


# --- Events (the AI SDK UI message stream chunk vocabulary) ----------------------------


class StartEvent(TypedDict):
    type: ReadOnly[Literal["start"]]
    messageId: NotRequired[ReadOnly[str]]
    messageMetadata: NotRequired[ReadOnly[JSONValue]]


class StartStepEvent(TypedDict):
    type: ReadOnly[Literal["start-step"]]


class FinishStepEvent(TypedDict):
    type: ReadOnly[Literal["finish-step"]]


class TextStartEvent(TypedDict):
    type: ReadOnly[Literal["text-start"]]
    id: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class TextDeltaEvent(TypedDict):
    type: ReadOnly[Literal["text-delta"]]
    id: ReadOnly[str]
    delta: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class TextEndEvent(TypedDict):
    type: ReadOnly[Literal["text-end"]]
    id: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ReasoningStartEvent(TypedDict):
    type: ReadOnly[Literal["reasoning-start"]]
    id: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ReasoningDeltaEvent(TypedDict):
    type: ReadOnly[Literal["reasoning-delta"]]
    id: ReadOnly[str]
    delta: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ReasoningEndEvent(TypedDict):
    type: ReadOnly[Literal["reasoning-end"]]
    id: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ToolInputStartEvent(TypedDict):
    type: ReadOnly[Literal["tool-input-start"]]
    toolCallId: ReadOnly[str]
    toolName: ReadOnly[str]
    providerExecuted: NotRequired[ReadOnly[bool]]
    dynamic: NotRequired[ReadOnly[bool]]
    title: NotRequired[ReadOnly[str]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ToolInputDeltaEvent(TypedDict):
    type: ReadOnly[Literal["tool-input-delta"]]
    toolCallId: ReadOnly[str]
    inputTextDelta: ReadOnly[str]


class ToolInputAvailableEvent(TypedDict):
    type: ReadOnly[Literal["tool-input-available"]]
    toolCallId: ReadOnly[str]
    toolName: ReadOnly[str]
    input: ReadOnly[JSONValue]
    providerExecuted: NotRequired[ReadOnly[bool]]
    dynamic: NotRequired[ReadOnly[bool]]
    title: NotRequired[ReadOnly[str]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ToolInputErrorEvent(TypedDict):
    type: ReadOnly[Literal["tool-input-error"]]
    toolCallId: ReadOnly[str]
    toolName: ReadOnly[str]
    input: ReadOnly[JSONValue]
    errorText: ReadOnly[str]
    providerExecuted: NotRequired[ReadOnly[bool]]
    dynamic: NotRequired[ReadOnly[bool]]
    title: NotRequired[ReadOnly[str]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ToolOutputAvailableEvent(TypedDict):
    type: ReadOnly[Literal["tool-output-available"]]
    toolCallId: ReadOnly[str]
    output: ReadOnly[JSONValue]
    providerExecuted: NotRequired[ReadOnly[bool]]
    dynamic: NotRequired[ReadOnly[bool]]
    preliminary: NotRequired[ReadOnly[bool]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class ToolOutputErrorEvent(TypedDict):
    type: ReadOnly[Literal["tool-output-error"]]
    toolCallId: ReadOnly[str]
    errorText: ReadOnly[str]
    providerExecuted: NotRequired[ReadOnly[bool]]
    dynamic: NotRequired[ReadOnly[bool]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class SourceUrlEvent(TypedDict):
    type: ReadOnly[Literal["source-url"]]
    sourceId: ReadOnly[str]
    url: ReadOnly[str]
    title: NotRequired[ReadOnly[str]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class SourceDocumentEvent(TypedDict):
    type: ReadOnly[Literal["source-document"]]
    sourceId: ReadOnly[str]
    mediaType: ReadOnly[str]
    title: ReadOnly[str]
    filename: NotRequired[ReadOnly[str]]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class FileEvent(TypedDict):
    type: ReadOnly[Literal["file"]]
    url: ReadOnly[str]
    mediaType: ReadOnly[str]
    providerMetadata: NotRequired[ReadOnly[JSONObject]]


class DataEvent(TypedDict):
    """Application data; ``type`` is ``data-<name>``."""

    type: ReadOnly[str]
    data: ReadOnly[JSONValue]
    id: NotRequired[ReadOnly[str]]
    transient: NotRequired[ReadOnly[bool]]


class MessageMetadataEvent(TypedDict):
    type: ReadOnly[Literal["message-metadata"]]
    messageMetadata: ReadOnly[JSONValue]


class Usage(TypedDict):
    """Token counts; a count the provider does not report is absent."""

    inputTokens: NotRequired[ReadOnly[int]]
    outputTokens: NotRequired[ReadOnly[int]]
    totalTokens: NotRequired[ReadOnly[int]]
    cachedInputTokens: NotRequired[ReadOnly[int]]
    reasoningTokens: NotRequired[ReadOnly[int]]


class FinishEvent(TypedDict):
    type: ReadOnly[Literal["finish"]]
    finishReason: ReadOnly[FinishReason]
    usage: NotRequired[ReadOnly[Usage]]
    messageMetadata: NotRequired[ReadOnly[JSONValue]]


ChatEvent: TypeAlias = (
    StartEvent
    | StartStepEvent
    | FinishStepEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ReasoningStartEvent
    | ReasoningDeltaEvent
    | ReasoningEndEvent
    | ToolInputStartEvent
    | ToolInputDeltaEvent
    | ToolInputAvailableEvent
    | ToolInputErrorEvent
    | ToolOutputAvailableEvent
    | ToolOutputErrorEvent
    | SourceUrlEvent
    | SourceDocumentEvent
    | FileEvent
    | DataEvent
    | MessageMetadataEvent
    | FinishEvent
)
"""One normalized stream event, frozen."""
