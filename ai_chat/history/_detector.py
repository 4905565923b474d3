"""What a detector is: the :class:`Finding` it reports, the :class:`Detector` protocol, and
:class:`Rule`, the custom detector made of one regular expression.

A detector finds spans of text; it does not replace them. The redactor collects every
detector's findings, resolves overlaps, and turns each kept finding into a placeholder
such as ``[EMAIL_1]`` numbered per distinct value (:attr:`Finding.key`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Protocol

from .._errors import ConfigurationError

__all__ = ["Detector", "Finding", "PatternDetector", "Rule", "check_label"]

# Labels become placeholders ``[LABEL_n]``; upper case, digits and underscores keep every
# placeholder recognizable (and so never redacted again, see _redaction.PLACEHOLDER).
_LABEL = re.compile(r"[A-Z][A-Z0-9_]{0,39}")
_LABEL_WORDS = "an upper-case label of at most 40 letters, digits and underscores, such as ORDER_ID"


def check_label(label: object, parameter: str = "label") -> str:
    """Return ``label`` if it can name a placeholder; raise :class:`ConfigurationError`."""
    if type(label) is not str or _LABEL.fullmatch(label) is None:
        raise ConfigurationError(parameter, label, _LABEL_WORDS)
    return label


@dataclass(frozen=True, slots=True)
class Finding:
    """One span a detector wants redacted: ``text[start:end]``.

    Attributes:
        start: index of the first character.
        end: index one past the last character (``start < end``).
        label: the placeholder's name (``EMAIL`` gives ``[EMAIL_1]``): upper case,
            digits and underscores, at most 40 characters.
        key: the value in canonical form, so that one value written two ways gets one
            placeholder (``Alice@Example.com`` and ``alice@example.com``; ``+1 415 555
            2671`` and ``(415) 555-2671``). ``None`` means the span's text as it is.
    """

    start: int
    end: int
    label: str
    key: str | None = None


class Detector(Protocol):
    """Finds spans to redact in a text; the redaction's extension point.

    ``find`` returns findings in any order, possibly overlapping (the redactor keeps the
    earliest, then the longest, then the one from the detector listed first). It must be
    a pure function of ``text``: no state carried from one call to the next, since the
    redactor may call it on many strings in any order. The built-in detectors run in
    time linear in ``len(text)``; a custom one should too.
    """

    @property
    def name(self) -> str:
        """A short name for errors and reports, such as ``"email"``."""
        ...

    def find(self, text: str, /) -> Iterable[Finding]:
        """The spans of ``text`` to redact."""
        ...


@dataclass(frozen=True, slots=True)
class Rule:
    """A custom detector: every match of ``pattern`` becomes a ``[LABEL_n]`` placeholder.

    ``group`` redacts one capture group instead of the whole match (``password=(\\S+)``
    keeps ``password=`` readable). ``validate``, when given, sees the redacted text and
    returns ``False`` to keep it. Zero-width matches redact nothing.

    The pattern is yours: Python's ``re`` backtracks, so a pattern with nested
    quantifiers such as ``(a+)+`` can take exponential time on hostile text. Keep
    quantifiers bounded (``\\d{6,12}``, not ``\\d+``) where input is untrusted.

    Raises:
        ConfigurationError: the label is not an upper-case name, the pattern does not
            compile, matches the empty string, or has no such group.
    """

    pattern: str | re.Pattern[str]
    label: str
    group: int | str = 0
    validate: Callable[[str], bool] | None = None
    name: str = ""
    _compiled: re.Pattern[str] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        check_label(self.label)
        try:
            compiled = (
                self.pattern if isinstance(self.pattern, re.Pattern) else re.compile(self.pattern)
            )
        except (re.error, TypeError) as exc:
            raise ConfigurationError(
                "pattern", self.pattern, f"a regular expression ({exc})"
            ) from exc
        if compiled.fullmatch("") is not None:
            raise ConfigurationError(
                "pattern", compiled.pattern, "a pattern that cannot match the empty string"
            )
        group = self.group
        if isinstance(group, str):
            if group not in compiled.groupindex:
                raise ConfigurationError("group", group, f"a group of {compiled.pattern!r}")
        elif type(group) is not int or not 0 <= group <= compiled.groups:
            raise ConfigurationError("group", group, f"a group number from 0 to {compiled.groups}")
        object.__setattr__(self, "_compiled", compiled)
        if not self.name:
            object.__setattr__(self, "name", self.label.lower())

    def find(self, text: str, /) -> Iterator[Finding]:
        """Each non-empty match (or group) that ``validate`` accepts."""
        group, label, validate = self.group, self.label, self.validate
        for match in self._compiled.finditer(text):
            start, end = match.span(group)
            if start >= end:  # an empty match, or a group that did not take part
                continue
            if validate is not None and not validate(text[start:end]):
                continue
            yield Finding(start, end, label)


@dataclass(frozen=True, slots=True)
class PatternDetector:
    """A built-in detector: a regular expression and a validator.

    ``check`` sees each match and returns the finding's key, or ``None`` to reject it:
    the pattern finds candidates cheaply, the validator decides. ``hints`` are substrings
    of which at least one occurs in every match, so a text without any is skipped with a
    fast ``in`` test instead of a regex scan.
    """

    name: str
    label: str
    pattern: re.Pattern[str]
    check: Callable[[re.Match[str]], str | None]
    hints: tuple[str, ...] = ()
    group: int = 0

    def find(self, text: str, /) -> Iterator[Finding]:
        """Each match the validator accepts."""
        if self.hints and not any(hint in text for hint in self.hints):
            return
        check, group, label = self.check, self.group, self.label
        for match in self.pattern.finditer(text):
            key = check(match)
            if key is not None:
                start, end = match.span(group)
                yield Finding(start, end, label, key)
