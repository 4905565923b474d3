"""A stored conversation as the UI messages a client shows (pure code, no I/O).

The store keeps an append-only log; the client shows one line of it. Every stored answer
records the message it answered (``metadata["aiChat"]["parentId"]``, the last message of
the request that produced it). Reading the log in order, an answer whose parent is not
the last message shown replaces everything after its parent: that is a regenerated
answer, and the client dropped the same messages when it asked for it. The ``aiChat``
key is the server's own and is removed from the metadata a client sees.

The normalized messages then become ``UIMessage`` s by the same conversion the UI message
stream client uses (tool results folded into the calls), and the steps of one answer
(``<id>``, ``<id>:1``...) are joined into one UI message with a ``step-start`` part
between steps, as the client built it while streaming.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, cast

from .._types import Message
from ..adapters.ui_stream._request import ui_messages

__all__ = ["SERVER_KEY", "TITLE_CHARS", "parent_of", "title_of", "ui_history"]

SERVER_KEY: Final = "aiChat"
TITLE_CHARS: Final = 80

JSONDict = dict[str, Any]


def parent_of(message: Mapping[str, Any]) -> str | None:
    """The id of the message an answer answered, or ``None`` (not an answer's first step)."""
    metadata = message.get("metadata")
    if message.get("role") != "assistant" or not isinstance(metadata, Mapping):
        return None
    own = cast("Mapping[str, Any]", metadata).get(SERVER_KEY)
    if not isinstance(own, Mapping):
        return None
    parent = cast("Mapping[str, Any]", own).get("parentId")
    return parent if type(parent) is str else None


def _shown(message: Message) -> Message:
    metadata = message.get("metadata")
    if metadata is None or SERVER_KEY not in metadata:
        return message
    copy = cast(JSONDict, dict(message))
    rest = {key: value for key, value in metadata.items() if key != SERVER_KEY}
    if rest:
        copy["metadata"] = rest
    else:
        del copy["metadata"]
    return cast(Message, copy)


def current_line(messages: Sequence[Message]) -> list[Message]:
    """The messages the client shows: regenerated answers replace what they replaced."""
    view: list[Message] = []
    where: dict[str, int] = {}
    for message in messages:
        parent = parent_of(message)
        if parent is not None:
            at = where.get(parent)
            if at is not None and at < len(view) - 1:
                for dropped in view[at + 1 :]:
                    del where[dropped["id"]]
                del view[at + 1 :]
        where[message["id"]] = len(view)
        view.append(_shown(message))
    return view


def ui_history(messages: Sequence[Message]) -> list[JSONDict]:
    """The stored ``messages`` (in sequence order) as the client's ``UIMessage`` list."""
    out: list[JSONDict] = []
    for ui in ui_messages(tuple(current_line(messages))):
        previous = out[-1] if out else None
        if (
            previous is not None
            and ui["role"] == "assistant"
            and previous["role"] == "assistant"
            and ui["id"].startswith(previous["id"] + ":")
        ):
            previous["parts"].append({"type": "step-start"})
            previous["parts"].extend(ui["parts"])
            continue
        out.append(ui)
    return out


def title_of(messages: Sequence[Message]) -> str:
    """The first user text, on one line and at most ``TITLE_CHARS`` characters; or ``""``."""
    for message in messages:
        if message["role"] != "user":
            continue
        for part in message["parts"]:
            if part["type"] == "text":
                text = " ".join(cast("Mapping[str, str]", part)["text"].split())
                if text:
                    return text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
    return ""
