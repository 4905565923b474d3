"""The UI message stream client adapter: ai_chat as the client of an AI SDK chat endpoint.

:class:`UIMessageStreamAdapter` POSTs the history as the Vercel AI SDK's
``DefaultChatTransport`` does and reads the answer (the UI message stream: Server-Sent
Events of JSON chunks) more strictly than the AI SDK's own client. It needs only
``httpx``, a dependency of ai_chat itself.

How normalized messages become ``UIMessage`` s: ``system``, ``user`` and ``assistant``
messages keep their id, role, metadata and parts; a ``tool-call`` part becomes a
``tool-<name>`` part whose state and output come from the matching ``tool-result`` of a
later ``tool`` message (UI messages carry results inside the assistant message, so
``tool`` messages are not sent as messages of their own). The protocol carries no tool
definitions or model parameters (the server owns them): a request with tools, or with a
parameter other than ``providerOptions``, is refused with
:class:`~ai_chat.ValidationError`. ``providerOptions["ui-stream"]`` holds extra body keys
for one request.
"""

from ._adapter import (
    DEFAULT_IDLE_TIMEOUT,
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_MAX_ERROR_BODY_BYTES,
    UIMessageStreamAdapter,
)

__all__ = [
    "DEFAULT_IDLE_TIMEOUT",
    "DEFAULT_MAX_BODY_BYTES",
    "DEFAULT_MAX_ERROR_BODY_BYTES",
    "UIMessageStreamAdapter",
]
