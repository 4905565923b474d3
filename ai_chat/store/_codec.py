"""The store codec: messages in and out of their stored form, and an append's plan.

A message is stored as its canonical JSON text (compact, keys sorted) and the digest of
that text, so that a replay with the same content is recognized whatever its key order.
Stored text was validated on the way in, so decoding trusts it and only freezes it again.
Times are stored as microseconds since the epoch.
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
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple, TypeVar, cast

from .._errors import ValidationError
from .._messages import normalize_messages
from .._types import Message
from ..limits import FrozenDict, JSONLimits
from ._checks import MAX_KEY_CHARS, check_expected_version, check_key, text_problem
from ._errors import DuplicateMessageError, StoreError, VersionConflictError
from ._records import StoredMessage

__all__ = [
    "EncodedMessage",
    "check_append",
    "decode_json",
    "decode_message",
    "decode_rows",
    "encode_batch",
    "encode_json",
    "from_micros",
    "now_micros",
    "plan_append",
]


def now_micros() -> int:
    """The current UTC time in microseconds since the epoch (how backends store times)."""
    return time.time_ns() // 1_000


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def from_micros(micros: int) -> datetime:
    """A time stored as microseconds since the epoch, as a timezone-aware UTC datetime."""
    return _EPOCH + timedelta(microseconds=micros)


_Time = TypeVar("_Time")
_ABSENT = object()
_EMPTY: FrozenDict[str, Any] = FrozenDict()

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
        problem = text_problem(message_id)
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
