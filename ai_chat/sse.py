"""The bounded, incremental, sans-IO Server-Sent Events decoder used by HTTP adapters."""

from ._sse import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_EVENT_CHARS,
    DEFAULT_MAX_LINE_CHARS,
    SSEDecoder,
    SSEEvent,
)

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_EVENT_CHARS",
    "DEFAULT_MAX_LINE_CHARS",
    "SSEDecoder",
    "SSEEvent",
]
