"""The error of ``ai_chat.formats``.

::

    AIChatError
    └── ValidationError        (ai_chat) not JSON, or not a message
        └── FormatError        a message or part a provider format cannot express
                               (``to_*``), or a provider payload that is not of the
                               format or holds what ai_chat's messages cannot (``from_*``)

A :class:`FormatError` is a :class:`~ai_chat.ValidationError` (and so a ``ValueError``):
code that catches bad input in general catches it too.
"""

from __future__ import annotations

from typing import Final, Literal, TypeAlias

from .._errors import ValidationError

__all__ = ["FORMATS", "Format", "FormatError"]

Format: TypeAlias = Literal["openai-chat", "openai-responses", "anthropic", "gemini"]
FORMATS: Final[tuple[Format, ...]] = ("openai-chat", "openai-responses", "anthropic", "gemini")

_NAMES: Final[dict[Format, str]] = {
    "openai-chat": "OpenAI Chat Completions",
    "openai-responses": "the OpenAI Responses API",
    "anthropic": "Anthropic Messages",
    "gemini": "the Gemini API",
}


def format_name(fmt: Format) -> str:
    """The provider API a format is, in words (for messages)."""
    return _NAMES[fmt]


class FormatError(ValidationError):
    """What a provider format cannot express, or a payload that is not of the format.

    Raised by ``to_*`` for a message or part the provider cannot take (a data part, a
    file type it does not read, reasoning without the provider's signature...), naming
    the message and the part; and by ``from_*`` for a payload that is not of the format
    or holds something ai_chat's messages have no place for (an audio part, a
    provider's built-in tool call...), naming where in the payload. Nothing is ever
    dropped instead.

    Attributes:
        path: where, as a JSON path: into the messages (``$.messages[3].parts[1]``) for
            ``to_*``, into the payload (``$.contents[2].parts[0].executableCode``) for
            ``from_*``.
        reason: what is wrong and what to do, in words.
        format: the format: ``"openai-chat"``, ``"openai-responses"``, ``"anthropic"``
            or ``"gemini"``.
        message_index: the position of the message concerned (in the messages for
            ``to_*``, in the payload's messages or contents for ``from_*``), or
            ``None`` when the payload itself is wrong.
        part_index: the position of the part (or content block) in that message, or
            ``None`` when the message as a whole is concerned.
        message_id: the id of the message concerned (``to_*`` only; ``None`` otherwise).
    """

    def __init__(
        self,
        path: str,
        reason: str,
        *,
        format: Format,
        message_index: int | None = None,
        part_index: int | None = None,
        message_id: str | None = None,
    ) -> None:
        self.format: Format = format
        self.message_index = message_index
        self.part_index = part_index
        self.message_id = message_id
        super().__init__(path, reason)
