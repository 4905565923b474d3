"""Compaction: the oldest turns replaced by a summary the caller's summarizer writes.

The summarizer is the caller's (``async (messages) -> str``; no model dependency here).
It is given the oldest whole turns (see :mod:`ai_chat.history._fit`), never a system
message (earlier summaries are system messages too), never a streaming message, never
half a tool pair; the summary becomes one system message, tagged
``metadata.aiChat.summary`` (``{"messages": <how many it replaces>}``), where the first
summarized message stood, so that the system messages stay before the conversation.
"""

# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .._errors import ConfigurationError
from .._types import Message
from ._bookkeeping import BOOKKEEPING_KEY, own_fields
from ._env import format_time
from ._fit import turn_starts
from ._sequence import Seq
from ._validate import check_new

if TYPE_CHECKING:
    from ._history import History

__all__ = ["SUMMARY_KEY", "Compaction", "compact", "is_summary"]

SUMMARY_KEY = "summary"
"""The ``metadata.aiChat`` key that tags a summary message."""

Summarizer = Callable[[tuple[Message, ...]], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class Compaction:
    """What :func:`compact` did.

    Attributes:
        history: the compacted history (the same history when nothing was summarized).
        summarized: the ids of the messages the summary replaces, in order.
        summary: the summary message, or ``None`` when nothing was summarized.
    """

    history: History
    summarized: tuple[str, ...]
    summary: Message | None

    @property
    def compacted(self) -> bool:
        """Whether anything was summarized."""
        return self.summary is not None


def is_summary(message: Message) -> bool:
    """Whether ``message`` is a summary :func:`compact` wrote."""
    return SUMMARY_KEY in own_fields(message)


async def compact(history: History, summarize: Summarizer, *, keep_last: int = 6) -> Compaction:
    """Replace the oldest turns of ``history`` with a summary of them.

    The last ``keep_last`` messages and everything after the first streaming message
    are kept, each with its turn; the turns before them are summarized: their messages
    but the system ones (earlier summaries included), in order, go to
    ``await summarize(messages)``, which returns the summary's text. When there is
    nothing to summarize, ``summarize`` is not called.

    A failing or cancelled ``summarize`` leaves the history as it was (a value: nothing
    is changed until the summary is in); its exception reaches the caller as it is.

    Raises:
        ConfigurationError: ``keep_last`` is not an int of 0 or more, or ``summarize``
            returned something else than a non-empty str.
    """
    if type(keep_last) is not int or keep_last < 0:
        raise ConfigurationError("keep_last", keep_last, "an int of 0 or more")
    seq = history._seq  # pyright: ignore[reportPrivateUsage]
    messages = seq.messages()
    size = len(messages)
    limit = min([size - min(keep_last, size), *seq.streaming_positions()])
    starts = turn_starts(history)
    cut = max(start for start in starts if start <= limit)
    chosen = [p for p in range(cut) if messages[p]["role"] != "system"]
    if not chosen:
        return Compaction(history, (), None)
    summarized = tuple(messages[p] for p in chosen)
    text: Any = await summarize(summarized)
    if type(text) is not str or not text:
        raise ConfigurationError("summarize()", text, "a non-empty str (the summary's text)")
    moment = history.env.time()
    when = format_time(moment)
    raw = {
        "id": history.env.identifier(),
        "role": "system",
        "parts": [{"type": "text", "text": text}],
        "metadata": {BOOKKEEPING_KEY: {"createdAt": when, SUMMARY_KEY: {"messages": len(chosen)}}},
    }
    (summary,) = check_new(seq, (raw,), history.limits, "$", None)
    first = chosen[0]
    kept = [*messages[:first], summary]
    kept.extend(messages[p] for p in range(first, cut) if messages[p]["role"] == "system")
    kept.extend(messages[cut:])
    compacted = history._changed(Seq.of(kept), moment)  # pyright: ignore[reportPrivateUsage]
    return Compaction(compacted, tuple(m["id"] for m in summarized), summary)
