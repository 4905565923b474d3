"""The phone number detector: phone-shaped candidates, validated by libphonenumber.

Telling a phone number from a date, an order number or a timestamp needs each country's
numbering plan, which Google's libphonenumber holds (the ``phonenumbers`` package). Its
metadata decides; this module only finds candidates cheaply and checks the strict digit
grouping from the number's own format. Every repeat is bounded and possessive, so the
scan is linear in the text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import lru_cache
from typing import cast

from .._errors import ConfigurationError
from ._detector import Finding

__all__ = ["PhoneDetector"]

# Phone-shaped candidates, which libphonenumber then validates. Each starts outside a
# word, a decimal number or a hyphenated code, and its repeats are possessive, so text
# that is all digits and punctuation costs one regex pass, not one validation per digit.
_BOUNDARY = r"(?<![\w.+\-/\\])"
_END = r"(?![\w]|[.,\-][0-9])"
# +CC and up to six groups (one may be in parentheses: +44 (0) 20 7946 0958).
_INTERNATIONAL = re.compile(
    _BOUNDARY + r"\+[0-9]{1,3}(?:[ .\-]?(?:\([0-9]{1,4}\)|[0-9]{1,5})){1,6}+" + _END
)
# North American national form: (415) 555-2671, 415-555-2671, 1-800-555-0199.
_NANP = re.compile(
    _BOUNDARY + r"(?:1[ .\-]?)?(?:\([0-9]{3}\)[ .\-]?|[0-9]{3}[ .\-])[0-9]{3}[ .\-][0-9]{4}" + _END
)
# Other national forms: groups with separators, the first maybe in parentheses.
_NATIONAL = re.compile(
    _BOUNDARY + r"(?:\([0-9]{2,5}\)|[0-9]{2,5})(?:[ .\-/]?[0-9]{2,8}){1,4}+" + _END
)
_GROUP = re.compile(r"[0-9]{1,64}")

# phonenumbers is imported where it is used, so that `import ai_chat.history` does not
# load libphonenumber's metadata (about 80 ms) until a text is scanned for phones.


class PhoneDetector:
    """Phone numbers in international form (``+44 20 7946 0958``) anywhere, and in the
    national forms of ``regions`` (``(415) 555-2671`` for ``"US"``).

    A candidate counts when libphonenumber holds it a valid number and it is written
    with the digit groups of that number's format, or fewer (``650 2530000``), never
    split elsewhere (``123-456-78901`` is not ``(234) 567-8901``): libphonenumber's
    strict grouping. It must look like a phone number: a ``+`` or separators. Bare digit
    runs (``4155552671``, ``1607635102``) are left alone: in chat transcripts they are
    ids, timestamps and amounts far more often than phone numbers.

    (libphonenumber's own ``PhoneNumberMatcher`` does the same search, at 0.2 to 0.9 ms
    per candidate; a page of numbers in a tool output would take seconds. The shapes
    above find the candidates; ``parse``, ``is_valid_number`` and the number's format
    decide, at about 0.06 ms each.)

    Raises:
        ConfigurationError: a region is not a libphonenumber region code.
    """

    __slots__ = ("_nanp", "_other", "_regions")
    name = "phone"

    def __init__(self, regions: tuple[str, ...] = ("US",)) -> None:
        import phonenumbers

        supported = phonenumbers.SUPPORTED_REGIONS
        given = cast(object, regions)
        if (
            type(given) is not tuple
            or not regions
            or any(region not in supported for region in regions)
        ):
            raise ConfigurationError(
                "phone_regions", regions, "a non-empty tuple of region codes such as ('US', 'GB')"
            )
        self._regions = regions
        nanp = [r for r in regions if phonenumbers.country_code_for_region(r) == 1]
        self._nanp = nanp[0] if nanp else None  # one NANP region parses them all
        self._other = tuple(r for r in regions if r not in nanp)

    def find(self, text: str, /) -> Iterator[Finding]:
        """Each valid phone number, keyed by its E.164 form."""
        if "+" in text:
            for match in _INTERNATIONAL.finditer(text):
                found = _trimmed(match.group(), None)
                if found is not None:
                    yield Finding(match.start(), match.start() + found[0], "PHONE", found[1])
        if self._nanp is not None:
            for match in _NANP.finditer(text):
                key = _phone_key(match.group(), self._nanp)
                if key is not None:
                    yield Finding(match.start(), match.end(), "PHONE", key)
        if self._other:
            for match in _NATIONAL.finditer(text):
                for region in self._other:
                    found = _trimmed(match.group(), region)
                    if found is not None:
                        yield Finding(match.start(), match.start() + found[0], "PHONE", found[1])
                        break

    def __repr__(self) -> str:
        return f"PhoneDetector(regions={self._regions!r})"


def _trimmed(candidate: str, region: str | None) -> tuple[int, str] | None:
    """The length and key of the longest valid number at the start of ``candidate``.

    A number followed by another number (``+44 20 7946 0958 2024``) is one candidate:
    trailing groups are dropped until a number is valid, while enough digits remain.
    """
    while True:
        key = _phone_key(candidate, region)
        if key is not None:
            return len(candidate), key
        cut = max(candidate.rfind(" "), candidate.rfind("-"), candidate.rfind("."))
        if cut <= 0:
            return None
        candidate = candidate[:cut].rstrip(" .-(")
        if sum(char.isdigit() for char in candidate) < 7:
            return None


@lru_cache(maxsize=4096)
def _phone_key(candidate: str, region: str | None) -> str | None:
    # Cached: logs repeat the same numbers, and a parse costs tens of microseconds.
    import phonenumbers as pn

    try:
        number = pn.parse(candidate, region)
    except pn.NumberParseException:
        return None
    if number.extension or not pn.is_valid_number(number):
        return None
    national = pn.national_significant_number(number)
    written = _GROUP.findall(candidate)
    digits = "".join(written)
    if not digits.endswith(national):
        return None
    # Strict grouping: every boundary between written groups that falls inside the
    # national number is a boundary of its formatted groups.
    international = pn.format_number(number, pn.PhoneNumberFormat.INTERNATIONAL)
    formatted = _GROUP.findall(international)[1:]  # without the country code
    allowed: set[int] = set()
    position = 0
    for group in formatted[:-1]:
        position += len(group)
        allowed.add(position)
    offset = len(digits) - len(national)  # country code and trunk prefix, as written
    position = 0
    for group in written[:-1]:
        position += len(group)
        if position > offset and position - offset not in allowed:
            return None
    return pn.format_number(number, pn.PhoneNumberFormat.E164)
