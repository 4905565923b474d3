"""ai_chat: the streaming chat-send lifecycle for LLM applications.

Normalize a chat history through a bounded JSON boundary, stream one answer from any
adapter through a lazy, validated, cancellable :class:`ChatStream`.

This package exports the lifecycle and its errors. Every other name has one home of its
own: the static types in :mod:`ai_chat.types`, the JSON boundary in :mod:`ai_chat.limits`,
the adapters in :mod:`ai_chat.adapters` and its provider modules, the server in
:mod:`ai_chat.server`, the conversation stores and their errors in :mod:`ai_chat.store`,
and the test kits in :mod:`ai_chat.testing`.
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
from ._version import __version__

__all__ = [
    "AIChatAdapter",
    "AIChatError",
    "AbortSignal",
    "AdapterError",
    "ChatStream",
    "ConfigurationError",
    "LimitExceededError",
    "ProtocolError",
    "ProviderError",
    "RemoteStreamError",
    "StreamBusyError",
    "StreamClosedError",
    "StreamFormatError",
    "TruncatedStreamError",
    "ValidationError",
    "__version__",
    "create_chat_stream",
    "is_data",
    "is_event",
    "is_part",
    "normalize_messages",
    "stream_chat",
]
