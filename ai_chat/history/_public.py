"""The public projection: what of a history may leave the server, built from an allow-list.

A browser payload, a server-rendered page or a log gets user and assistant text and
nothing else, redacted. The projection is built up from what is allowed rather than by
removing what is not, so a field added to messages later is left out until someone
decides it may be shown.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, cast

from .._errors import ConfigurationError
from .._types import Message
from ..limits import FrozenDict
from ._bookkeeping import is_hidden, is_streaming
from ._history import History
from ._queries import message_text
from ._redaction import redact_messages

__all__ = ["public_projection"]


def public_projection(
    history: History, *, redact_text: Callable[[str], str] | None = None
) -> tuple[Message, ...]:
    """The messages of ``history`` that may be shown publicly, redacted.

    Kept: the text of each user and assistant message that is neither hidden nor
    streaming, its text parts joined (as :func:`message_text` does); a message without
    text is left out. Each becomes ``{"id": "m<n>", "role", "parts": [{"type": "text",
    "text"}]}``, a normalized message (and an AI SDK ``UIMessage``), numbered from 1 in
    order: internal ids are never shown (an id can carry data: a client-chosen chat id,
    an answer's step suffix), and the numbers count only what is shown, so they do not
    tell how many hidden, system or tool messages lie between.

    Never kept: system and tool messages, hidden messages, streaming ones (a partial
    answer can hold the first half of a credential, which no detector recognizes),
    reasoning, tool calls and results, files, data parts, metadata and bookkeeping
    (times, usage, sources), provider metadata and any property ai_chat does not define,
    and the history's own id, title and metadata.

    The default redaction (:func:`redact_messages` with the default detectors) always
    runs, over the kept texts together, so a placeholder stands for one value across
    the whole projection; ``redact_text``, when given, then runs on each text for
    stricter, domain-specific rules. The result is frozen and goes to ``json.dumps`` as
    it is.

    Raises:
        ConfigurationError: ``history`` is not a History, ``redact_text`` is not
            callable, or it returned something other than a str.
    """
    if not isinstance(cast(object, history), History):
        raise ConfigurationError("history", history, "a History")
    if redact_text is not None and not callable(redact_text):
        raise ConfigurationError("redact_text", redact_text, "a function from str to str")
    shown: list[Message] = []
    for message in history.messages:
        if message["role"] not in ("user", "assistant"):
            continue
        if is_hidden(message) or is_streaming(message):
            continue
        text = message_text(message)
        if not text:
            continue
        shown.append(_message(f"m{len(shown) + 1}", message["role"], text))
    redacted = redact_messages(shown)
    if redact_text is None:
        return redacted
    out: list[Message] = []
    for message in redacted:
        stricter: object = redact_text(message_text(message))
        if type(stricter) is not str:
            raise ConfigurationError("redact_text", redact_text, "a function that returns a str")
        out.append(_message(message["id"], message["role"], stricter))
    return tuple(out)


def _message(message_id: str, role: str, text: str) -> Message:
    part: Any = FrozenDict({"type": "text", "text": text})
    return cast(Message, FrozenDict({"id": message_id, "role": role, "parts": (part,)}))
