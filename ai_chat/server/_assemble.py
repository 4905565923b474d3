"""One answer's events assembled into the normalized messages a store keeps (sans-IO).

The folding is :class:`ai_chat.history.AnswerFold`'s (one implementation for the server,
the history's projection and the runtime). What is the server's own is the ``finish``
event as its client receives it: the server sends the finish reason and the usage in
the finish chunk's ``messageMetadata`` (the AI SDK's ``finish`` chunk has no usage field;
see ``_encode``), so the client's message ends up with ``{"finishReason", "usage"}`` in
its metadata, under the adapter's own finish metadata (the adapter's keys win). The
assembler feeds the fold that same ``finish``, so that the stored answer and the client's
next request agree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from .._types import ChatEvent
from ..history import AnswerFold

__all__ = ["AnswerAssembler"]

JSONDict = dict[str, Any]


class AnswerAssembler:
    """Feed it an answer's validated events with :meth:`feed`; :meth:`messages` assembles them.

    Args:
        first_step: the number of the answer's first step: 0 for a new answer, the
            number of steps the client already holds for a continued one (its ids then
            go on from there: ``<id>:<first_step>``...).
    """

    __slots__ = ("_fold",)

    def __init__(self, first_step: int = 0) -> None:
        # The events are a ChatStream's: validated and frozen already.
        self._fold = AnswerFold(first_step=first_step, checked=True)

    @property
    def finished(self) -> bool:
        """Whether ``finish`` was fed: the answer is complete."""
        return self._fold.finished

    def feed(self, event: ChatEvent) -> None:
        """Take the next event (validated, in order, as a :class:`~ai_chat.ChatStream` yields)."""
        fields = cast("Mapping[str, Any]", event)
        if fields["type"] == "finish":
            facts: JSONDict = {"finishReason": fields["finishReason"]}
            if "usage" in fields:
                facts["usage"] = fields["usage"]
            own = fields.get("messageMetadata")
            if isinstance(own, Mapping):
                facts.update(cast("Mapping[str, Any]", own))
            fields = {**fields, "messageMetadata": facts}
        self._fold.feed(fields)

    def messages(
        self, message_id: str, extra_metadata: Mapping[str, object] | None = None
    ) -> list[JSONDict]:
        """The answer as normalized messages, ids from ``message_id``.

        ``extra_metadata`` is merged into the first message's metadata. Parts still
        open (an answer that never finished) are left out.
        """
        return [dict(m) for m in self._fold.messages(message_id, extra_metadata)]
