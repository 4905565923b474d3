"""Redaction: personal data and credentials replaced by stable placeholders.

A :class:`Redactor` holds detectors (the defaults, or yours) and is immutable; a
:class:`RedactionSession` numbers placeholders per distinct value, so ``[EMAIL_1]`` is
the same address everywhere in what one session redacted and ``[EMAIL_2]`` another one.
The functions :func:`redact_text`, :func:`redact_message` and :func:`redact_messages`
are the one-call forms, each with a fresh session: the same input gives the same output.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import cache

from .._errors import ConfigurationError
from .._types import Message
from ._detector import Detector, Finding, PatternDetector, check_label
from ._phones import PhoneDetector
from ._pii import CARD, EMAIL, IPV4, IPV6, SSN, CardDetector, EmailDetector
from ._redact_parts import redact_message_strings, strings_of
from ._secrets import (
    ANTHROPIC_KEY,
    AWS_ACCESS_KEY,
    AWS_SECRET_KEY,
    BASIC_AUTH,
    BEARER_TOKEN,
    GITHUB_TOKEN,
    GOOGLE_API_KEY,
    JWT,
    OPENAI_KEY,
    PRIVATE_KEY,
    SLACK_TOKEN,
    PrivateKeyDetector,
)

__all__ = [
    "RedactionSession",
    "Redactor",
    "default_detectors",
    "redact_message",
    "redact_messages",
    "redact_text",
]

# What a placeholder looks like. A finding that overlaps one, or is glued to one with no
# character between them, is dropped: redacting again cannot find what the first pass
# could not see (a value glued to a replaced one was not a value of its own), so
# redaction is idempotent whatever the detectors.
PLACEHOLDER = re.compile(r"\[([A-Z][A-Z0-9_]{0,39})_([1-9][0-9]{0,9})\]")

_MAX_PASSES = 8
_BUILT_IN = (PatternDetector, CardDetector, EmailDetector, PhoneDetector, PrivateKeyDetector)


def default_detectors(*, phone_regions: tuple[str, ...] = ("US",)) -> tuple[Detector, ...]:
    """The built-in detectors, in their order of precedence.

    Credentials first (a key inside an ``Authorization`` header is named for what it
    is), then e-mail addresses, card numbers, SSNs, IP addresses and phone numbers.
    ``phone_regions`` are the regions whose national phone formats count (international
    ``+`` numbers count for every region).

    Raises:
        ConfigurationError: a region is not a region code libphonenumber knows.
    """
    return (
        PRIVATE_KEY,
        ANTHROPIC_KEY,
        OPENAI_KEY,
        GITHUB_TOKEN,
        AWS_ACCESS_KEY,
        AWS_SECRET_KEY,
        SLACK_TOKEN,
        GOOGLE_API_KEY,
        JWT,
        BEARER_TOKEN,
        BASIC_AUTH,
        EMAIL,
        CARD,
        SSN,
        IPV4,
        IPV6,
        PhoneDetector(phone_regions),
    )


class Redactor:
    """Detectors and how their findings combine; immutable, so share one freely.

    ``detectors`` defaults to :func:`default_detectors`; pass your own list to add
    :class:`Rule` s or custom :class:`Detector` s, or to leave some out::

        Redactor([*default_detectors(), Rule(r"\\bORD-[0-9]{6,12}\\b", "ORDER_ID")])

    Where findings overlap, the one starting first wins, then the longest, then the one
    from the detector listed first.

    Raises:
        ConfigurationError: ``detectors`` is not an iterable of detectors.
    """

    __slots__ = ("_checked", "_detectors")

    def __init__(self, detectors: Iterable[Detector] | None = None) -> None:
        chosen = default_detectors() if detectors is None else tuple(detectors)
        for detector in chosen:
            if not callable(getattr(detector, "find", None)) or not isinstance(
                getattr(detector, "name", None), str
            ):
                raise ConfigurationError(
                    "detectors", detector, "detectors: a name and a find(text) method"
                )
        self._detectors = chosen
        # Built-in detectors are trusted to report well-formed findings; others are
        # checked, so a buggy custom detector fails loudly instead of garbling text.
        self._checked = tuple(not isinstance(d, _BUILT_IN) for d in chosen)

    @property
    def detectors(self) -> tuple[Detector, ...]:
        """The detectors, in their order of precedence."""
        return self._detectors

    def session(self) -> RedactionSession:
        """A new session: placeholders numbered from 1, kept across its calls."""
        return RedactionSession(self)

    def find(self, text: str) -> tuple[Finding, ...]:
        """What one scan would redact in ``text``: non-overlapping findings, in order.

        None overlaps a placeholder already in ``text`` or is glued to one (see
        ``PLACEHOLDER``). Redacting scans again until this is empty.

        Raises:
            ConfigurationError: a custom detector reported a finding outside the text,
                an empty one, or one with a label that cannot name a placeholder.
        """
        found: list[tuple[int, int, int, Finding]] = []
        for index, detector in enumerate(self._detectors):
            checked = self._checked[index]
            for finding in detector.find(text):
                if checked:
                    _check_finding(finding, text, detector)
                found.append((finding.start, finding.start - finding.end, index, finding))
        if not found:
            return ()
        found.sort(key=_precedence)
        taken = _placeholder_spans(text)
        kept: list[Finding] = []
        reached = 0
        next_taken = 0  # both lists are sorted by start: one merge pass
        for start, _, _, finding in found:
            if start < reached:
                continue
            while next_taken < len(taken) and taken[next_taken][1] < start:
                next_taken += 1
            if next_taken < len(taken) and taken[next_taken][0] <= finding.end:
                continue  # overlaps a placeholder, or is glued to one
            kept.append(finding)
            reached = finding.end
        return tuple(kept)

    def redact_text(self, text: str) -> str:
        """``text`` with each finding replaced by its placeholder (a fresh session)."""
        return self.session().redact_text(text)

    def redact_message(self, message: Message) -> Message:
        """A redacted copy of one message (a fresh session); see :func:`redact_message`."""
        return self.session().redact_message(message)

    def redact_messages(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        """A redacted copy of a history (one session); see :func:`redact_messages`."""
        return self.session().redact_messages(messages)

    def __repr__(self) -> str:
        return f"Redactor({[getattr(d, 'name', d) for d in self._detectors]!r})"


def _precedence(entry: tuple[int, int, int, Finding]) -> tuple[int, int, int]:
    return entry[0], entry[1], entry[2]


def _check_finding(finding: object, text: str, detector: Detector) -> None:
    name = getattr(detector, "name", type(detector).__name__)
    if not isinstance(finding, Finding):
        raise ConfigurationError(f"detector {name!r}", finding, "an iterable of Finding values")
    start, end = finding.start, finding.end
    if type(start) is not int or type(end) is not int or not 0 <= start < end <= len(text):
        raise ConfigurationError(
            f"detector {name!r}",
            finding,
            f"findings with 0 <= start < end <= len(text) ({len(text)})",
        )
    check_label(finding.label, f"detector {name!r} finding label")
    if finding.key is not None and type(finding.key) is not str:
        raise ConfigurationError(f"detector {name!r} finding key", finding.key, "a str or None")


def _placeholder_spans(text: str) -> list[tuple[int, int]]:
    if "[" not in text:
        return []
    return [match.span() for match in PLACEHOLDER.finditer(text)]


class RedactionSession:
    """Redacts texts and messages with one numbering of placeholders.

    Each distinct value (per label, by :attr:`Finding.key`) gets the next number the
    first time it is seen, and keeps it for the session's life. Placeholders already in
    a redacted input keep their numbers reserved, so redacting a history again after
    new messages were added never gives a new value an old value's placeholder.

    A session remembers the values it replaced (that is how it numbers them): keep it
    no longer than the history it serves. It is not thread-safe.
    """

    __slots__ = ("_next", "_numbers", "_redactor")

    def __init__(self, redactor: Redactor) -> None:
        self._redactor = redactor
        self._numbers: dict[tuple[str, str], int] = {}
        self._next: dict[str, int] = {}

    @property
    def redactor(self) -> Redactor:
        """The redactor whose detectors this session applies."""
        return self._redactor

    def redact_text(self, text: str) -> str:
        """``text`` with each finding replaced by its placeholder.

        Raises:
            ConfigurationError: a custom detector reported a malformed finding.
        """
        self._reserve(text)
        return self._replace(text)

    def redact_message(self, message: Message) -> Message:
        """A redacted copy of one message; see :func:`redact_message`.

        Raises:
            ValidationError: ``message`` does not have a message's shape.
            ConfigurationError: a custom detector reported a malformed finding.
        """
        return self.redact_messages((message,))[0]

    def redact_messages(self, messages: Sequence[Message]) -> tuple[Message, ...]:
        """A redacted copy of a history; see :func:`redact_messages`.

        Raises:
            ValidationError: an element does not have a message's shape; ``path`` names
                it.
            ConfigurationError: a custom detector reported a malformed finding.
        """
        # Read twice (placeholders reserved first), so an iterator is taken whole once.
        items = messages if isinstance(messages, list | tuple) else tuple(messages)
        for text in strings_of(items):
            self._reserve(text)
        return tuple(
            redact_message_strings(message, index, self._replace)
            for index, message in enumerate(items)
        )

    def _reserve(self, text: str) -> None:
        if "[" not in text:
            return
        following = self._next
        for match in PLACEHOLDER.finditer(text):
            label, number = match.group(1), int(match.group(2))
            if following.get(label, 1) <= number:
                following[label] = number + 1

    def _replace(self, text: str) -> str:
        # A candidate can hide another: a detector's regex consumes text that another
        # detector's finding wins, and what it hid shows once that finding is a
        # placeholder. So the scan repeats on its own output until nothing is found:
        # the result is a fixed point (redacting it again changes nothing). Ordinary
        # text needs one extra scan of the strings that had findings; the cap bounds
        # crafted input.
        for _ in range(_MAX_PASSES):
            findings = self._redactor.find(text)
            if not findings:
                return text
            text = self._substitute(text, findings)
        return text

    def _substitute(self, text: str, findings: tuple[Finding, ...]) -> str:
        numbers, following = self._numbers, self._next
        pieces: list[str] = []
        position = 0
        for finding in findings:
            label = finding.label
            key = finding.key if finding.key is not None else text[finding.start : finding.end]
            number = numbers.get((label, key))
            if number is None:
                number = following.get(label, 1)
                following[label] = number + 1
                numbers[label, key] = number
            pieces.append(text[position : finding.start])
            pieces.append(f"[{label}_{number}]")
            position = finding.end
        pieces.append(text[position:])
        return "".join(pieces)


@cache
def _default_redactor() -> Redactor:
    return Redactor()


def redact_text(text: str, *, redactor: Redactor | None = None) -> str:
    """``text`` with personal data and credentials replaced by placeholders.

    ``redactor`` defaults to one with :func:`default_detectors`. Pure: the same text
    gives the same result (placeholders numbered from 1 in order of first appearance).

    Raises:
        ConfigurationError: a custom detector reported a malformed finding.
    """
    return (redactor or _default_redactor()).redact_text(text)


def redact_message(message: Message, *, redactor: Redactor | None = None) -> Message:
    """A redacted copy of one normalized message; see :func:`redact_messages`.

    Raises:
        ValidationError: ``message`` does not have a message's shape.
        ConfigurationError: a custom detector reported a malformed finding.
    """
    return (redactor or _default_redactor()).redact_message(message)


def redact_messages(
    messages: Sequence[Message], *, redactor: Redactor | None = None
) -> tuple[Message, ...]:
    """A redacted copy of a history, with placeholders numbered across all of it.

    Redacted: the text of text parts and of unsigned reasoning, file names, the string
    values inside tool inputs and outputs, data parts and message metadata, and any
    property ai_chat does not define. Kept as they are: ids, roles, part types, tool
    names and call ids, media types, file URLs, ``isError``, ``providerMetadata`` and
    the structure (keys, numbers, booleans, order).

    Reasoning parts signed or encrypted by the provider (``providerMetadata`` with an
    Anthropic ``signature`` or ``redactedData``, OpenAI ``reasoningEncryptedContent`` or
    ``itemId``, a Gemini ``thoughtSignature``, or any key naming a signature or
    encrypted content) are left out of the copy, never altered: a provider rejects a
    signed block whose text changed, so a rewritten one would break the next request.

    The result passes :func:`ai_chat.normalize_messages` (placeholders can make a string
    longer, so a history at the edge of its limits may need larger ones).

    Raises:
        ValidationError: an element does not have a message's shape; ``path`` names it.
        ConfigurationError: a custom detector reported a malformed finding.
    """
    return (redactor or _default_redactor()).redact_messages(messages)
