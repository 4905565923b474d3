"""The decoded messages a store keeps in memory between loads, and how a load is split
between them and the database."""

from __future__ import annotations

from collections.abc import Sequence

from .._errors import ConfigurationError
from ._records import StoredMessage

__all__ = ["DEFAULT_CACHE_CHARS", "MessageCache", "check_cache_chars", "serve_load"]


def check_cache_chars(value: object) -> int:
    """The ``cache_chars`` option: an ``int`` >= 0 (0 turns the cache off)."""
    if type(value) is not int or value < 0:
        raise ConfigurationError("cache_chars", value, "an int >= 0 (0 turns the cache off)")
    return value


DEFAULT_CACHE_CHARS = 8_000_000
"""The stored JSON text of the messages a store keeps decoded in memory, by default."""


class MessageCache:
    """Decoded messages of recently loaded conversations, least recently used dropped first.

    A log is append-only and a stored message never changes, so a message once read
    stays valid: each conversation's entry is a prefix of its log (``seq`` 1 to ``n``)
    and a load only reads the messages after it, in one snapshot that also holds the
    prefix. Bounded by the stored JSON text of the cached messages (``max_chars``); a
    conversation larger than that is never cached. Used from the event loop only.
    """

    __slots__ = ("_chars", "_entries", "_max_chars")

    def __init__(self, max_chars: int) -> None:
        self._max_chars = max_chars
        self._chars = 0
        # conversation id -> (its first messages, their JSON text's size)
        self._entries: dict[str, tuple[list[StoredMessage], int]] = {}

    @property
    def enabled(self) -> bool:
        return self._max_chars > 0

    @property
    def chars(self) -> int:
        """The size of the cached messages' stored JSON text."""
        return self._chars

    def prefix(self, conversation_id: str) -> list[StoredMessage]:
        """The cached messages of the conversation, from ``seq`` 1 (empty if none).

        The list is the cache's own: read it, never change it."""
        entry = self._entries.pop(conversation_id, None)
        if entry is None:
            return []
        self._entries[conversation_id] = entry  # now the most recently used
        return entry[0]

    def extend(
        self, conversation_id: str, start: int, loaded: Sequence[StoredMessage], chars: int
    ) -> None:
        """Add messages just loaded from ``seq`` ``start + 1`` on, if they continue the
        cached prefix (another load may have added them first)."""
        if not loaded or self._max_chars <= 0:
            return
        entry = self._entries.pop(conversation_id, None)
        messages, size = ([], 0) if entry is None else entry
        if len(messages) != start or loaded[0].seq != start + 1:
            if entry is not None:
                self._entries[conversation_id] = entry
            return
        if size + chars > self._max_chars:  # never kept, and it evicts nothing
            self._chars -= size
            return
        messages.extend(loaded)
        self._entries[conversation_id] = (messages, size + chars)
        self._chars += chars
        while self._chars > self._max_chars and self._entries:
            oldest = next(iter(self._entries))
            self._chars -= self._entries.pop(oldest)[1]

    def serve(
        self, conversation_id: str, after: int, limit: int | None
    ) -> tuple[tuple[StoredMessage, ...], int, int | None]:
        """:func:`serve_load` over the cached messages of the conversation."""
        return serve_load(self.prefix(conversation_id) if self.enabled else [], after, limit)

    def join(
        self,
        conversation_id: str,
        start: int,
        head: tuple[StoredMessage, ...],
        loaded: tuple[StoredMessage, ...],
        chars: int,
    ) -> tuple[StoredMessage, ...]:
        """A load's answer: ``head`` from the cache, then ``loaded`` from the database
        (read after ``start``, ``chars`` of stored text), which the cache keeps."""
        if not loaded:
            return head
        self.extend(conversation_id, start, loaded, chars)
        return head + loaded if head else loaded

    def clear(self) -> None:
        self._entries.clear()
        self._chars = 0


def serve_load(
    cached: list[StoredMessage], after: int, limit: int | None
) -> tuple[tuple[StoredMessage, ...], int, int | None]:
    """Split a load between the cache and the database.

    Returns the messages the cache has (``seq > after``, at most ``limit``), the ``seq``
    after which the database is to be read, and how many to read there (``None``: all;
    0: none, the cache answered the whole load).
    """
    upto = len(cached)
    if after >= upto:
        return (), after, limit
    end = upto if limit is None else min(upto, after + limit)
    head = tuple(cached[after:end])
    remaining = None if limit is None else limit - len(head)
    return head, upto, remaining
