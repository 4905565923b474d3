"""Snapshots: a value in a versioned envelope, sealed with a SHA-256 digest (and an HMAC).

Format version 1 is one line of JSON, its fields in this order::

    {"format":"ai_chat.snapshot","version":1,"kind":"history",
     "digest":"sha256:<64 hex>","hmac":"hmac-sha256:<64 hex>","payload":{...}}

* ``payload`` is the sealed value: for ``kind`` ``"history"``, :meth:`History.to_json`.
  It is written in canonical JSON: object keys sorted, no insignificant whitespace,
  non-ASCII characters as they are (UTF-8), numbers as Python's ``json`` writes them.
* ``digest`` is SHA-256 over the *sealed bytes*: ``ai_chat.snapshot``, the version and
  the kind, each followed by a line feed, then the canonical payload in UTF-8. Binding
  the version and the kind means neither can be changed without the digest failing.
* ``hmac`` (only when written with a key) is HMAC-SHA256 over the same bytes. A digest
  proves the snapshot is intact (a cut or a changed byte); anyone can recompute it, so
  only the HMAC proves that whoever holds the key wrote it: use one for snapshots that
  travel through a client.

The loader checks the digest (and the HMAC, when given a key; both compared in constant
time) over the canonical form of the payload it parsed, so a reformatted snapshot
(``jq .``) still loads, and a changed one never does. A snapshot as written holds that
canonical form verbatim, and is checked without serializing it again.

Versions are pinned: the writer always writes :data:`SNAPSHOT_VERSION`; the loader reads
versions from 1 (the floor) to it, a newer one is refused, and an older one is brought
up by the migrations registered in ``MIGRATIONS`` (version N to N+1, one explicit
function per step, applied after the older version's digest is checked). There are none
yet: a format change adds the next version, its migration, and golden files of the old
one that must keep loading (tests/history/golden/).

The envelope holds any JSON value of any ``kind``: :func:`seal` and :func:`unseal` are
what :func:`to_snapshot` / :func:`from_snapshot` use for histories, and what a snapshot of
a whole conversation tree uses with a kind of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, Final, cast

from .._describe import shown
from .._errors import ConfigurationError, LimitExceededError, ValidationError
from ..limits import JSONLimits
from ._env import HistoryEnv
from ._errors import SnapshotError
from ._history import History
from ._validate import MESSAGE_LIMITS

__all__ = [
    "MIGRATIONS",
    "SNAPSHOT_FORMAT",
    "SNAPSHOT_VERSION",
    "Migration",
    "canonical_json",
    "check_key",
    "from_snapshot",
    "seal",
    "to_snapshot",
    "unseal",
]

SNAPSHOT_FORMAT: Final = "ai_chat.snapshot"
SNAPSHOT_VERSION: Final = 1
"""The snapshot format version this ai_chat writes (and the newest it reads)."""

Migration = Callable[[str, Any], Any]
"""``(kind, payload of version N) -> payload of version N + 1``."""

MIGRATIONS: Final[Mapping[int, Migration]] = MappingProxyType({})
"""The migration from each version N to N + 1, by N. Version 1 is the floor: none yet."""

_KIND = re.compile(r"[a-z][a-z0-9-]{0,39}")
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
_HMAC = re.compile(r"hmac-sha256:[0-9a-f]{64}")
# The head seal() writes, before the payload's canonical text.
_WRITTEN = re.compile(
    r'\{"format":"ai_chat\.snapshot","version":([1-9][0-9]{0,8}),"kind":"([a-z][a-z0-9-]{0,39})",'
    r'"digest":"sha256:([0-9a-f]{64})"(?:,"hmac":"hmac-sha256:([0-9a-f]{64})")?,"payload":'
)
_FIELDS = ("format", "version", "kind", "digest", "hmac", "payload")
_MIN_KEY_BYTES = 16


def canonical_json(value: object) -> str:
    """``value`` as canonical JSON text: keys sorted, no spaces, UTF-8 characters as they
    are, NaN and infinities refused (``ValueError``)."""
    return json.dumps(
        value, ensure_ascii=False, sort_keys=True, separators=(",", ":"), allow_nan=False
    )


def check_key(key: object) -> bytes | None:
    """``key`` (an HMAC key) checked: ``None`` or at least 16 bytes.

    Raises:
        ConfigurationError: anything else (the message never shows the key).
    """
    if key is None:
        return None
    if type(key) is bytes and len(key) >= _MIN_KEY_BYTES:
        return key
    described = f"bytes of length {len(key)}" if type(key) is bytes else type(key).__name__
    raise ConfigurationError(
        "key", described, f"None or bytes of at least {_MIN_KEY_BYTES} (secrets.token_bytes(32))"
    )


def _sealed_bytes(version: int, kind: str, payload_text: str) -> bytes:
    return f"{SNAPSHOT_FORMAT}\n{version}\n{kind}\n{payload_text}".encode()


def seal(kind: str, payload: object, key: bytes | None = None) -> str:
    """The snapshot text (version :data:`SNAPSHOT_VERSION`) of a JSON value.

    Raises:
        ConfigurationError: ``kind`` is not a short lowercase name, or ``key`` is not
            ``None`` or at least 16 bytes.
        ValueError: ``payload`` holds NaN or an infinity (a frozen JSON value never does).
    """
    if type(kind) is not str or not _KIND.fullmatch(kind):
        raise ConfigurationError("kind", kind, "a lowercase name such as 'history'")
    secret = check_key(key)
    payload_text = canonical_json(payload)
    sealed = _sealed_bytes(SNAPSHOT_VERSION, kind, payload_text)
    head = (
        f'{{"format":"{SNAPSHOT_FORMAT}","version":{SNAPSHOT_VERSION},"kind":"{kind}",'
        f'"digest":"sha256:{hashlib.sha256(sealed).hexdigest()}"'
    )
    if secret is not None:
        head += f',"hmac":"hmac-sha256:{hmac.new(secret, sealed, hashlib.sha256).hexdigest()}"'
    return f'{head},"payload":{payload_text}}}'


def unseal(
    data: str | bytes,
    kind: str,
    key: bytes | None = None,
    *,
    current: int = SNAPSHOT_VERSION,
    migrations: Mapping[int, Migration] = MIGRATIONS,
) -> Any:
    """The verified payload of a snapshot of ``kind``, migrated to version ``current``.

    The payload is parsed JSON (dicts and lists), checked only for its integrity: the
    caller validates what it holds.

    Raises:
        SnapshotError: see :attr:`SnapshotError.problem`.
        ConfigurationError: ``data`` is not str or bytes, or ``key`` is not ``None`` or
            at least 16 bytes.
    """
    secret = check_key(key)
    envelope, sealed = _read(_text(data))
    version = envelope["version"]
    if version > current or version < 1:
        newest = "newer than" if version > current else "not"
        raise SnapshotError(
            "version",
            "$.version",
            f"snapshot format version {version} is {newest} a version this ai_chat reads "
            f"(1 to {current})",
        )
    found_kind = envelope["kind"]
    if found_kind != kind:
        raise SnapshotError(
            "kind", "$.kind", f"this is a snapshot of a {shown(found_kind)}, not of a {kind!r}"
        )
    payload = envelope["payload"]
    if sealed is None:
        try:
            sealed = _sealed_bytes(version, found_kind, canonical_json(payload))
        except (ValueError, UnicodeEncodeError):  # a lone surrogate, a NaN: never sealed
            raise SnapshotError(
                "digest", "$.payload", "the payload holds what no snapshot was written with"
            ) from None
    digest = "sha256:" + hashlib.sha256(sealed).hexdigest()
    if not hmac.compare_digest(digest, envelope["digest"]):
        raise SnapshotError(
            "digest",
            "$.digest",
            "the payload does not match its digest: the snapshot was changed after it was written",
        )
    if secret is not None:
        signature = envelope.get("hmac")
        if signature is None:
            raise SnapshotError(
                "hmac", "$.hmac", "the snapshot is not signed, and a key was given to check it"
            )
        expected = "hmac-sha256:" + hmac.new(secret, sealed, hashlib.sha256).hexdigest()
        if not hmac.compare_digest(expected, signature):
            raise SnapshotError(
                "hmac",
                "$.hmac",
                "the signature does not match: the snapshot was written with another key "
                "or changed after it was signed",
            )
    for step in range(version, current):
        migrate = migrations.get(step)
        if migrate is None:
            raise SnapshotError(
                "version",
                "$.version",
                f"no migration from snapshot format version {step} to {step + 1}",
            )
        payload = migrate(found_kind, payload)
    return payload


def _text(data: object) -> str:
    if type(data) is str:
        return data
    if type(data) is bytes:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise SnapshotError(
                "malformed", "$", f"not UTF-8 text (byte {exc.start}): not a snapshot"
            ) from None
    raise ConfigurationError("data", data, "the snapshot text, as str or bytes")


def _read(text: str) -> tuple[dict[str, Any], bytes | None]:
    """The envelope, and the sealed bytes when they could be taken from the text as it is.

    A snapshot as :func:`seal` wrote it holds its payload's canonical text verbatim after
    a fixed head: when the digest matches that text, only the payload is parsed and
    nothing is serialized again. Anything else (a reformatted snapshot, a damaged one)
    takes the general way: parse it all, check each field, canonicalize the payload.
    """
    written = _WRITTEN.match(text)
    end = len(text.rstrip())
    if written is not None and text.endswith("}", 0, end):
        version, kind, digest, signature = written.groups()
        try:
            sealed = _sealed_bytes(int(version), kind, text[written.end() : end - 1])
        except UnicodeEncodeError:
            sealed = None
        if sealed is not None and hmac.compare_digest(hashlib.sha256(sealed).hexdigest(), digest):
            try:
                payload: object = json.loads(
                    text[written.end() : end - 1], parse_constant=_reject_constant
                )
            except (ValueError, RecursionError):
                pass  # the general way says what is wrong
            else:
                envelope: dict[str, Any] = {
                    "format": SNAPSHOT_FORMAT,
                    "version": int(version),
                    "kind": kind,
                    "digest": f"sha256:{digest}",
                    "payload": payload,
                }
                if signature is not None:
                    envelope["hmac"] = f"hmac-sha256:{signature}"
                return envelope, sealed
    return _envelope(text), None


def _reject_constant(name: str) -> object:
    raise ValueError(f"{name} is not JSON")


def _envelope(text: str) -> dict[str, Any]:
    try:
        parsed: object = json.loads(text, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        # An envelope is an object: a text that does not end with its brace, or whose
        # error is at its very end, was cut off (rather than written wrong).
        end = len(text.rstrip())
        if not text.rstrip().endswith("}") or exc.pos >= end or exc.msg.startswith("Unterm"):
            what = "empty" if not text.strip() else "cut off"
            raise SnapshotError(
                "truncated", "$", f"the snapshot is {what} (at character {exc.pos})"
            ) from None
        raise SnapshotError(
            "malformed", "$", f"not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except (ValueError, RecursionError) as exc:
        reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
        raise SnapshotError("malformed", "$", f"not JSON: {reason}") from None
    if type(parsed) is not dict:
        raise SnapshotError("malformed", "$", "not a snapshot: expected a JSON object")
    envelope = cast("dict[str, Any]", parsed)
    for name in envelope:
        if name not in _FIELDS:
            raise SnapshotError(
                "malformed", "$", f"unknown snapshot field {shown(name)} (expected {_FIELDS})"
            )
    if "format" not in envelope:
        raise SnapshotError("malformed", "$", 'not a snapshot: no "format" field')
    if envelope["format"] != SNAPSHOT_FORMAT:
        raise SnapshotError(
            "format",
            "$.format",
            f"expected format {SNAPSHOT_FORMAT!r}, got {shown(envelope['format'])}",
        )
    for name in ("version", "kind", "digest", "payload"):
        if name not in envelope:
            raise SnapshotError("malformed", "$", f'the snapshot has no "{name}" field')
    _check_field(envelope, "version", type(envelope["version"]) is int, "an integer")
    _check_field(envelope, "kind", _matches(_KIND, envelope["kind"]), "a lowercase name")
    _check_field(envelope, "digest", _matches(_DIGEST, envelope["digest"]), '"sha256:<hex>"')
    if "hmac" in envelope:
        _check_field(envelope, "hmac", _matches(_HMAC, envelope["hmac"]), '"hmac-sha256:<hex>"')
    return envelope


def _matches(pattern: re.Pattern[str], value: object) -> bool:
    return type(value) is str and pattern.fullmatch(value) is not None


def _check_field(envelope: Mapping[str, object], name: str, ok: bool, expected: str) -> None:
    if not ok:
        raise SnapshotError(
            "malformed", f"$.{name}", f"expected {expected}, got {shown(envelope[name])}"
        )


def to_snapshot(history: History, *, key: bytes | None = None) -> str:
    """The snapshot of ``history`` (format version :data:`SNAPSHOT_VERSION`), as text.

    One line of JSON, no trailing newline; the same history (and key) always gives the
    same text. With ``key`` (at least 16 bytes), it is also signed with HMAC-SHA256.

    Raises:
        ConfigurationError: ``history`` is not a History, or ``key`` is not ``None`` or
            at least 16 bytes.
    """
    if not isinstance(cast(object, history), History):
        raise ConfigurationError("history", history, "a History")
    return seal("history", history.to_json(), key)


def from_snapshot(
    data: str | bytes,
    *,
    key: bytes | None = None,
    env: HistoryEnv | None = None,
    limits: JSONLimits = MESSAGE_LIMITS,
) -> History:
    """The history a snapshot holds, verified: digest, version, kind and every invariant.

    With ``key``, the snapshot must also be signed with it (a snapshot without an
    ``hmac`` is refused); without one, a signature is not checked. The history goes
    through :meth:`History.from_json` (with ``env`` and ``limits``).

    Raises:
        SnapshotError: malformed, truncated, another format or kind, a version this
            ai_chat does not read, a digest or signature that does not match, or an
            intact payload that is not a valid history (``problem`` ``"invalid"``,
            ``__cause__`` the history's ValidationError or LimitExceededError).
        ConfigurationError: ``data`` is not str or bytes, or a bad ``key``.
    """
    payload = unseal(data, "history", key)
    try:
        return History.from_json(payload, env=env, limits=limits)
    except (ValidationError, LimitExceededError) as exc:
        inner = exc.path[1:] if exc.path.startswith("$") else ""
        reason = exc.reason if isinstance(exc, ValidationError) else str(exc)
        raise SnapshotError(
            "invalid",
            f"$.payload{inner}",
            f"the snapshot is intact but not a valid history: {reason}",
        ) from exc
