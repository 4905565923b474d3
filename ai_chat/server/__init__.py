"""Serve chat answers over HTTP in the AI SDK's UI message stream protocol.

Needs the ``server`` extra: ``pip install "ai_chat[server]"`` (or ``uv add
"ai_chat[server]"``), which brings Starlette and uvicorn. Importing :mod:`ai_chat` never
imports Starlette; importing this module does.

* :func:`create_chat_app`: an ASGI app with ``POST /api/chat`` and the chat page at ``/``.
* :func:`chat_endpoint`: the same endpoint, to mount in an existing Starlette or FastAPI
  app.
* :class:`UIMessageStreamResponse`: turn any :class:`~ai_chat.ChatStream` into a
  streaming response, from your own endpoint.
* :class:`AnswerLimits`, :class:`AnswerLimiter`, :class:`MemoryAnswerLimiter`: how many
  answers one subject may run; :func:`load_secret`: the visitor cookies' secret, kept in
  a file.

Both apps refuse cross-site requests, DNS rebinding and non-JSON bodies, give each
browser its own conversations, and limit the answers per subject, by default; a token
or an ``auth`` callback gates them further (``docs/deploying.md``).

On the wire, each event is one ``data: <json>`` frame, as the adapter produced it,
except that ``start`` always carries a ``messageId`` and the ``finish`` event's usage
and finish reason travel in its ``messageMetadata`` (``{"finishReason": ...,
"usage": {...}}``): the AI SDK's ``finish`` chunk has no usage field, and its client
keeps message-level facts only in ``message.metadata``.
"""

try:
    import starlette as _starlette  # noqa: F401  # pyright: ignore[reportUnusedImport]
except ImportError as exc:  # pragma: no cover - exercised in a subprocess
    raise ImportError(
        'ai_chat.server needs Starlette: pip install "ai_chat[server]" '
        '(or uv add "ai_chat[server]")',
        name=exc.name,
    ) from exc

from ._app import DEFAULT_MAX_BODY_BYTES, chat_endpoint, create_chat_app
from ._limits import AnswerLimiter, AnswerLimits, LimitRefusal, MemoryAnswerLimiter
from ._response import DEFAULT_KEEP_ALIVE, MASKED_ERROR, UIMessageStreamResponse
from ._subjects import load_secret
from ._ui_messages import ConvertedMessages, convert_ui_messages

__all__ = [
    "DEFAULT_KEEP_ALIVE",
    "DEFAULT_MAX_BODY_BYTES",
    "MASKED_ERROR",
    "AnswerLimiter",
    "AnswerLimits",
    "ConvertedMessages",
    "LimitRefusal",
    "MemoryAnswerLimiter",
    "UIMessageStreamResponse",
    "chat_endpoint",
    "convert_ui_messages",
    "create_chat_app",
    "load_secret",
]
