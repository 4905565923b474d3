"""ai_chat: the streaming chat-send lifecycle for LLM applications.

Normalize a chat history through a bounded JSON boundary, stream one answer from any
adapter through a lazy, validated, cancellable :class:`ChatStream`.
"""

from ._adapter import AbortSignal, AIChatAdapter
from ._errors import (
    AdapterError,
    AIChatError,
    ConfigurationError,
    LimitExceededError,
    ProtocolError,
    ProviderError,
    RemoteStreamError,
    StreamBusyError,
    StreamClosedError,
    StreamFormatError,
    TruncatedStreamError,
    ValidationError,
)
from ._messages import normalize_messages
from ._narrow import is_data, is_event, is_part
from ._stream import ChatStream, create_chat_stream, stream_chat
from ._types import (
    ChatEvent,
    ChatRequest,
    DataPart,
    FilePart,
    FinishEvent,
    FinishReason,
    Message,
    Part,
    ReasoningPart,
    Role,
    TextPart,
    ToolCallPart,
    ToolDefinition,
    ToolResultPart,
    Usage,
)

__all__ = [
    "AIChatAdapter",
    "AIChatError",
    "AbortSignal",
    "AdapterError",
    "ChatEvent",
    "ChatRequest",
    "ChatStream",
    "ConfigurationError",
    "DataPart",
    "FilePart",
    "FinishEvent",
    "FinishReason",
    "LimitExceededError",
    "Message",
    "Part",
    "ProtocolError",
    "ProviderError",
    "ReasoningPart",
    "RemoteStreamError",
    "Role",
    "StreamBusyError",
    "StreamClosedError",
    "StreamFormatError",
    "TextPart",
    "ToolCallPart",
    "ToolDefinition",
    "ToolResultPart",
    "TruncatedStreamError",
    "Usage",
    "ValidationError",
    "create_chat_stream",
    "is_data",
    "is_event",
    "is_part",
    "normalize_messages",
    "stream_chat",
]
