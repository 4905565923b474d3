"""What every store backend shares: argument checks done before any I/O, and the codec.

A message is stored as its canonical JSON text (compact, keys sorted) and the digest of
that text, so that a replay with the same content is recognized whatever its key order.
Stored text was validated on the way in, so decoding trusts it and only freezes it again.
"""

# The decoding loops check JSON values typed Any with `type(x) is ...` at run time, which
# pyright cannot follow without a cast per value: so these "unknown type" reports are off
# here, as in ai_chat/_messages.py.
# pyright: reportUnknownVariableType=false, reportUnknownMemberType=false, reportUnknownArgumentType=false

from __future__ import annotations

import hashlib
import json
import json.scanner
import time
import uuid
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, TypeVar, cast

from .._errors import ConfigurationError, ValidationError
from .._messages import normalize_messages
from .._types import Message
from ..limits import FrozenDict, JSONLimits, JSONObject, freeze_json
from ._errors import DuplicateMessageError, InvalidRatingError, StoreError, VersionConflictError
from ._records import Conversation, StoredMessage

__all__ = [
    "DEFAULT_CACHE_CHARS",
    "DEFAULT_STORE_LIMITS",
    "MAX_COMMENT_CHARS",
    "MAX_KEY_CHARS",
    "EncodedMessage",
    "MessageCache",
    "check_append",
    "check_cache_chars",
    "check_count",
    "check_create",
    "check_expected_version",
    "check_key",
    "check_listing",
    "check_load",
    "check_optional_count",
    "check_rate",
    "check_rating",
    "check_recent",
    "decode_json",
    "decode_message",
    "decode_rows",
    "encode_batch",
    "encode_json",
    "freeze_metadata",
    "from_micros",
    "new_conversation_id",
    "new_record",
    "now_micros",
    "plan_append",
    "serve_load",
]

_Time = TypeVar("_Time")
_ABSENT = object()
_EMPTY: FrozenDict[str, Any] = FrozenDict()

DEFAULT_STORE_LIMITS = JSONLimits(max_depth=64, max_values=100_000, max_chars=16_000_000)
"""The bounds on one appended batch (and on one conversation's metadata) by default."""

MAX_KEY_CHARS = 256
MAX_COMMENT_CHARS = 10_000


def now_micros() -> int:
    """The current UTC time in microseconds since the epoch (how backends store times)."""
    return time.time_ns() // 1_000


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_micros(micros: int) -> datetime:
    """A time stored as microseconds since the epoch, as a timezone-aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=micros)


def new_conversation_id() -> str:
    return str(uuid.uuid4())


def _text_problem(value: str) -> str | None:
    if "\x00" in value:
        return "must not contain NUL characters"
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain lone surrogates"
    return None


def check_key(name: str, value: object) -> str:
    """A conversation id, context or subject id: a non-empty ``str`` of bounded length."""
    expected = f"a non-empty str of at most {MAX_KEY_CHARS} characters without NUL"
    if type(value) is not str or not value or len(value) > MAX_KEY_CHARS:
        raise ConfigurationError(name, value, expected)
    if _text_problem(value) is not None:
        raise ConfigurationError(name, value, expected)
    return value


def check_count(name: str, value: object) -> int:
    """``after``, ``limit`` or ``count``: an ``int`` >= 0 (``bool`` excluded)."""
    if type(value) is not int or value < 0:
        raise ConfigurationError(name, value, "an int >= 0")
    return value


def check_optional_count(name: str, value: object) -> int | None:
    """An ``int`` >= 0 or ``None``."""
    if value is None:
        return None
    if type(value) is not int or value < 0:
        raise ConfigurationError(name, value, "an int >= 0 or None")
    return value


def check_expected_version(value: object) -> int | None:
    return check_optional_count("expected_version", value)


def check_rating(rating: object, comment: object) -> tuple[int, str | None]:
    """Raise :class:`InvalidRatingError` unless ``rating`` is an int from 1 to 5."""
    if type(rating) is not int or not 1 <= rating <= 5:
        raise InvalidRatingError(
            rating, f"a rating is an int from 1 to 5 (not a bool or float), got {rating!r}"
        )
    if comment is None:
        return rating, None
    if type(comment) is not str or len(comment) > MAX_COMMENT_CHARS:
        shown = comment if type(comment) is not str else f"a str of {len(comment)} characters"
        raise InvalidRatingError(
            rating,
            f"a rating comment is None or a str of at most {MAX_COMMENT_CHARS:,} "
            f"characters, got {shown!r}",
        )
    problem = _text_problem(comment)
    if problem is not None:
        raise InvalidRatingError(rating, f"a rating comment {problem}")
    return rating, comment


def freeze_metadata(metadata: object, limits: JSONLimits) -> JSONObject:
    """Metadata as a deep-frozen JSON object (``None`` gives ``{}``)."""
    if metadata is None:
        return FrozenDict()
    if not isinstance(metadata, Mapping):
        raise ValidationError("metadata", f"expected a JSON object, got {type(metadata).__name__}")
    frozen = freeze_json(dict(cast("Mapping[str, object]", metadata)), limits, root="metadata")
    return cast(JSONObject, frozen)


def check_create(
    context: object,
    subject_id: object,
    metadata: object,
    conversation_id: object,
    limits: JSONLimits,
) -> tuple[str, JSONObject]:
    """``create_conversation``'s arguments checked: the id to create (a new one when
    ``conversation_id`` is ``None``) and the frozen metadata."""
    check_key("context", context)
    check_key("subject_id", subject_id)
    wanted = None if conversation_id is None else check_key("conversation_id", conversation_id)
    frozen = freeze_metadata(metadata, limits)
    return (new_conversation_id() if wanted is None else wanted), frozen


def new_record(
    conversation_id: str, context: str, subject_id: str, metadata: JSONObject, created: datetime
) -> Conversation:
    """The record of a conversation just created: no messages, no rating."""
    return Conversation(
        id=conversation_id,
        context=context,
        subject_id=subject_id,
        created_at=created,
        updated_at=created,
        metadata=metadata,
        rating=None,
        comment=None,
        version=0,
    )


def check_listing(context: object, subject_id: object, limit: object) -> int:
    """``list_conversations``'s arguments checked: the ``limit``."""
    check_key("context", context)
    check_key("subject_id", subject_id)
    return check_count("limit", limit)


def check_append(
    conversation_id: object,
    messages: Sequence[object],
    expected_version: object,
    limits: JSONLimits,
) -> tuple[int | None, tuple[EncodedMessage, ...]]:
    """``append_messages``'s arguments checked: the expected version and the encoded batch."""
    checked_id = check_key("conversation_id", conversation_id)
    expected = check_expected_version(expected_version)
    return expected, encode_batch(checked_id, messages, limits)


def check_load(conversation_id: object, after: object, limit: object) -> tuple[int, int | None]:
    """``load_messages``'s arguments checked: ``after`` and ``limit``."""
    check_key("conversation_id", conversation_id)
    return check_count("after", after), check_optional_count("limit", limit)


def check_recent(conversation_id: object, count: object) -> int:
    """``load_recent_messages``'s arguments checked: the ``count``."""
    check_key("conversation_id", conversation_id)
    return check_count("count", count)


def check_rate(conversation_id: object, rating: object, comment: object) -> tuple[int, str | None]:
    """``rate``'s arguments checked (the rating first): the rating and the comment."""
    checked = check_rating(rating, comment)
    check_key("conversation_id", conversation_id)
    return checked


# Built once: json.dumps with options builds an encoder on every call.
_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
# A message's stored text: compact, keys sorted (JSON objects are unordered), so that
# the same content always has the same text and digest, whatever its key order was.
_encode_canonical = json.JSONEncoder(
    ensure_ascii=False, separators=(",", ":"), sort_keys=True
).encode


def encode_json(value: object) -> str:
    return _encode(value)


class EncodedMessage(NamedTuple):
    """One message ready for a backend: its id, JSON text (canonical: keys sorted) and
    the SHA-256 digest of that text."""

    id: str
    body: str
    digest: bytes
    message: Message


def encode_batch(
    conversation_id: str, messages: Sequence[object], limits: JSONLimits
) -> tuple[EncodedMessage, ...]:
    """Normalize a batch through the JSON boundary and encode it; no I/O.

    Raises:
        ValidationError: a message is not valid (the batch is held to ``limits`` as one
            JSON value), or a message id is longer than 256 characters or holds NUL.
        LimitExceededError: the batch exceeds ``limits``.
        DuplicateMessageError: the batch holds one id twice.
    """
    kind = type(messages)
    if (
        kind is not list
        and kind is not tuple
        and (
            isinstance(messages, (str, bytes, bytearray))
            or not isinstance(
                messages,
                Sequence,  # pyright: ignore[reportUnnecessaryIsInstance] -- callers are untyped
            )
        )
    ):
        raise ValidationError("$", f"expected an array of messages, got {type(messages).__name__}")
    normalized = normalize_messages(messages, limits=limits)
    seen: set[str] = set()
    encoded: list[EncodedMessage] = []
    for index, message in enumerate(normalized):
        message_id = message["id"]
        problem = _text_problem(message_id)
        if len(message_id) > MAX_KEY_CHARS:
            problem = f"must be at most {MAX_KEY_CHARS} characters in a store"
        if problem is not None:
            raise ValidationError(f"$[{index}].id", f"a message id {problem}")
        if message_id in seen:
            raise DuplicateMessageError(
                conversation_id, message_id, "the batch holds this message id twice"
            )
        seen.add(message_id)
        body = _encode_canonical(message)
        digest = hashlib.sha256(body.encode("utf-8")).digest()
        encoded.append(EncodedMessage(message_id, body, digest, message))
    return tuple(encoded)


def _lists_to_tuples(value: Any) -> Any:
    """Arrays inside freshly decoded JSON to tuples; the objects are ours, so fix in place."""
    kind = type(value)
    if kind is list:
        return tuple(
            _lists_to_tuples(item) if type(item) is list or type(item) is FrozenDict else item
            for item in value
        )
    if kind is FrozenDict:
        for key, item in list(value.items()):
            if type(item) is list or type(item) is FrozenDict:
                fixed = _lists_to_tuples(item)
                if fixed is not item:
                    dict.__setitem__(value, key, fixed)
    return value


# The C scanner with FrozenDict as the object hook freezes each object without a
# Python call per object; stored text is compact JSON we wrote, so the decoder's
# whitespace handling around the value is not needed.
_SCAN: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder(object_hook=FrozenDict)  # pyright: ignore[reportArgumentType] -- typeshed's stub is wrong
)


def _scan(text: str) -> tuple[Any, int]:
    try:
        return _SCAN(text, 0)
    except (StopIteration, ValueError) as exc:  # StopIteration: no value where one starts
        raise StoreError(
            f"a stored value is not valid JSON ({exc!r}): the database was altered"
        ) from None


_EXTRA_TEXT = "a stored value has extra characters after its JSON: the database was altered"


def decode_json(text: str) -> Any:
    """Stored JSON text back to frozen JSON (objects ``FrozenDict``, arrays ``tuple``).

    Raises:
        StoreError: the text is not the JSON the store wrote (the database was altered).
    """
    if text == "{}":  # metadata, usually
        return _EMPTY
    value, end = _scan(text)
    if end != len(text):
        raise StoreError(_EXTRA_TEXT)
    brackets = text.count("[")
    if not brackets:
        return value
    if brackets == 1 and type(value) is FrozenDict:
        # The usual message: its parts are the only array (a "[" inside a string would
        # make the count larger and take the general path).
        parts = value.get("parts")
        if type(parts) is list:
            dict.__setitem__(value, "parts", tuple(parts))
            return value
    return _lists_to_tuples(value)


_new_tuple = tuple.__new__


def decode_rows(
    rows: Sequence[tuple[int, str, _Time]], moment: Callable[[_Time], datetime]
) -> tuple[StoredMessage, ...]:
    """Rows of ``(seq, body, stored time)`` as stored messages: the hot path of a load.

    ``moment`` converts a backend's time; a batch's messages share theirs, so each
    distinct time is converted once. Each body is scanned on its own (so an altered
    row fails as itself, never combining with its neighbours); the usual message's
    parts, its only array, become a tuple in place, and any other arrays are made
    tuples from the scanned value, without a second scan.
    """
    scan = _scan
    stored: list[StoredMessage] = []
    append = stored.append
    last: object = _ABSENT
    when = datetime.min
    for seq, body, created in rows:
        if created != last:
            last, when = created, moment(created)
        message, end = scan(body)
        if end != len(body):
            raise StoreError(_EXTRA_TEXT)
        parts = message.get("parts") if type(message) is FrozenDict else None
        if type(parts) is list and body.count("[") == 1:
            dict.__setitem__(message, "parts", tuple(parts))  # the only array
        elif "[" in body:
            message = _lists_to_tuples(message)
        append(_new_tuple(StoredMessage, (seq, message, when)))
    return tuple(stored)


def decode_message(body: str) -> Message:
    return cast(Message, decode_json(body))


def plan_append(
    conversation_id: str,
    batch: Sequence[EncodedMessage],
    existing: Mapping[str, tuple[int, bytes]],
    version: int,
    expected_version: int | None,
) -> tuple[tuple[int, ...], tuple[EncodedMessage, ...]]:
    """Decide an append inside the backend's transaction: each message's seq, and the new ones.

    ``existing`` maps the batch's ids that are already stored to their seq and digest.

    Raises:
        DuplicateMessageError: an id is stored with another digest.
        VersionConflictError: something is new and ``expected_version`` is not ``version``.
    """
    seqs: list[int] = []
    new: list[EncodedMessage] = []
    next_seq = version + 1
    for item in batch:
        found = existing.get(item.id)
        if found is None:
            seqs.append(next_seq)
            next_seq += 1
            new.append(item)
            continue
        seq, digest = found
        if digest != item.digest:
            raise DuplicateMessageError(
                conversation_id,
                item.id,
                f"already stored as message #{seq} with different content; a new message "
                "needs a new id",
            )
        seqs.append(seq)
    if new and expected_version is not None and expected_version != version:
        raise VersionConflictError(conversation_id, expected_version, version)
    return tuple(seqs), tuple(new)


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
