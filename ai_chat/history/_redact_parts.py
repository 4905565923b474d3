"""Which strings of a message are redacted, and which reasoning is left out.

Pure functions over normalized messages: the result is built of new frozen values
(:class:`~ai_chat.limits.FrozenDict` and tuples) with the same keys in the same order.
"""

# The walk reads JSON values typed object and checks their types at run time; pyright
# cannot follow `type(x) is ...` narrowing into the containers' element types.
# pyright: reportUnknownVariableType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import cast

from .._errors import ValidationError
from .._types import Message
from ..limits import FrozenDict
from ..limits._walk import format_path

__all__ = ["is_signed_reasoning", "redact_message_strings", "strings_of"]

# Message and part properties that are ids or structure: never redacted. Everything
# else (text, filename, input, output, data, metadata, properties ai_chat does not
# define) has its strings redacted.
_KEPT_MESSAGE = frozenset({"id", "role", "parts"})
_KEPT_PART = frozenset(
    {"type", "id", "toolCallId", "toolName", "mediaType", "url", "isError", "providerMetadata"}
)
# providerMetadata keys that mark a provider-signed or provider-held reasoning block:
# Anthropic's signature and redactedData, OpenAI's reasoningEncryptedContent and itemId
# (the Responses API's stored item), Gemini's thoughtSignature; and, for providers
# ai_chat does not know, any key that names a signature or encrypted content.
_SIGNED_KEYS = frozenset({"redacteddata", "itemid"})


def is_signed_reasoning(part: Mapping[str, object]) -> bool:
    """Whether a reasoning part carries provider-signed or provider-held content."""
    metadata = part.get("providerMetadata")
    if not isinstance(metadata, Mapping):
        return False
    for provider in cast("Mapping[str, object]", metadata).values():
        if not isinstance(provider, Mapping):
            continue
        for key in cast("Mapping[str, object]", provider):
            lowered = key.lower()
            if lowered in _SIGNED_KEYS or "signature" in lowered or "encrypted" in lowered:
                return True
    return False


def _is_container(value: object) -> bool:
    return isinstance(value, Mapping) or type(value) is tuple or type(value) is list


def _entries(value: object) -> Iterator[tuple[object, object]]:
    if isinstance(value, Mapping):
        return iter(cast("Mapping[object, object]", value).items())
    return enumerate(cast("Sequence[object]", value))


def _leaves(value: object) -> Iterator[str]:
    """Every string value inside a JSON value (keys excluded), without recursion."""
    stack = [value]
    while stack:
        item = stack.pop()
        if type(item) is str:
            yield item
        elif _is_container(item):
            stack.extend(child for _, child in _entries(item))


def _map_strings(value: object, redact: Callable[[str], str]) -> object:
    """``value`` with every string value redacted, keys and structure kept.

    Iterative, so a deeply nested tool input (the JSON limits allow depth 100,000)
    cannot exhaust the interpreter's stack.
    """
    if type(value) is str:
        return redact(value)
    if not _is_container(value):
        return value
    # A frame: whether it builds an object, its remaining entries, what it has built,
    # and its key in the parent.
    stack: list[tuple[bool, Iterator[tuple[object, object]], list[tuple[object, object]], object]]
    stack = [(isinstance(value, Mapping), _entries(value), [], None)]
    while True:
        is_object, entries, built, _ = frame = stack[-1]
        for key, child in entries:
            if type(child) is str:
                built.append((key, redact(child)))
            elif _is_container(child):
                stack.append((isinstance(child, Mapping), _entries(child), [], key))
                break
            else:
                built.append((key, child))
        else:
            stack.pop()
            result = FrozenDict(built) if is_object else tuple(child for _, child in built)
            if not stack:
                return result
            stack[-1][2].append((frame[3], result))


def strings_of(messages: Sequence[Message]) -> Iterator[str]:
    """Every string that redacting ``messages`` would scan (to reserve placeholders)."""
    for message in cast("Sequence[object]", messages):
        if not isinstance(message, Mapping):
            continue  # redact_message_strings reports it
        for key, value in cast("Mapping[str, object]", message).items():
            if key == "parts" and (type(value) is tuple or type(value) is list):
                for part in cast("Sequence[object]", value):
                    if isinstance(part, Mapping):
                        fields = cast("Mapping[str, object]", part)
                        for name, field in fields.items():
                            if name not in _KEPT_PART:
                                yield from _leaves(field)
            elif key not in _KEPT_MESSAGE:
                yield from _leaves(value)


def redact_message_strings(message: Message, index: int, redact: Callable[[str], str]) -> Message:
    """A copy of ``message`` with its redactable strings passed through ``redact`` and
    its signed reasoning parts left out.

    Raises:
        ValidationError: ``message`` or one of its parts does not have the shape of a
            normalized message (``$[index]...`` names where).
    """
    given = cast(object, message)
    if not isinstance(given, Mapping):
        raise ValidationError(format_path([index]), "expected a message object")
    fields = cast("Mapping[str, object]", message)
    parts = fields.get("parts")
    if type(parts) is not tuple and type(parts) is not list:
        raise ValidationError(format_path([index, "parts"]), "expected an array of parts")
    copy: list[tuple[str, object]] = []
    for key, value in fields.items():
        if key == "parts":
            value = tuple(_parts(cast("Sequence[object]", parts), index, redact))
        elif key not in _KEPT_MESSAGE:
            value = _map_strings(value, redact)
        copy.append((key, value))
    return cast(Message, FrozenDict(copy))


def _parts(
    parts: Sequence[object], index: int, redact: Callable[[str], str]
) -> Iterator[FrozenDict[str, object]]:
    for number, part in enumerate(parts):
        if not isinstance(part, Mapping):
            raise ValidationError(format_path([index, "parts", number]), "expected a part object")
        fields = cast("Mapping[str, object]", part)
        kind = fields.get("type")
        if type(kind) is not str:
            raise ValidationError(
                format_path([index, "parts", number, "type"]), "expected a part type string"
            )
        if kind == "reasoning" and is_signed_reasoning(fields):
            continue  # provider-signed: dropped, never rewritten
        yield FrozenDict(
            (name, value if name in _KEPT_PART else _map_strings(value, redact))
            for name, value in fields.items()
        )
